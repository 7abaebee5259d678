// Two runs never write the same output or sidecar (docs/cli-contract.md, "Durability"): a run takes a lock
// file beside each destination (`.<name>.lock`, holding its pid, host and start time) before it
// makes any request; a second run finds it and stops at once, naming the file and the holder. A
// lock whose process is gone (same host) is stale and taken over at once: a run killed with -9
// holds nobody up. A holder on another host (a shared folder) refreshes the file's time while it
// runs; one not refreshed for STALE_MS is stale too. (proper-lockfile judges by that time alone,
// which would refuse the re-run after a kill -9 for its whole stale period: hence these few lines.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OutputLockedError, UnwritableOutputError } from '../api/errors.js';
import { isAlive } from '../core/processes.js';
import { PATH_GIVEN, type OutputOption } from './output-words.js';
import { whyNotWritable } from './output-place.js';
import { removeStalePartials } from './sinks.js';

const REFRESH_MS = 20_000;
const STALE_MS = 3 * REFRESH_MS;

interface Holder {
  pid: number;
  host: string;
  started: string;
}

export class OutputLock {
  readonly #file: string;
  readonly #timer: NodeJS.Timeout;
  #released = false;

  private constructor(file: string) {
    this.#file = file;
    this.#timer = setInterval(() => fs.utimes(file, new Date(), new Date(), () => {}), REFRESH_MS);
    this.#timer.unref();
  }

  /** The lock file of a destination path. */
  static pathFor(destination: string): string {
    const final = path.resolve(destination);
    return path.join(path.dirname(final), `.${path.basename(final)}.lock`);
  }

  /**
   * Takes the lock on `destination` (the file written: a link's target), or throws
   * OutputLockedError naming the run that holds it; `what` and `option` name the output in words.
   */
  static acquire(destination: string, what: string, option: OutputOption = 'output'): OutputLock {
    const file = OutputLock.pathFor(destination);
    const me: Holder = { pid: process.pid, host: os.hostname(), started: new Date().toISOString() };
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
    } catch (error) {
      throw unwritable(destination, error, option);
    }
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        fs.writeFileSync(file, `${JSON.stringify(me)}\n`, { flag: 'wx', mode: 0o644 });
        // The output is ours now: what dead runs left of it goes, whether or not this run gets to write.
        removeStalePartials(path.resolve(destination));
        return new OutputLock(file);
      } catch (error) {
        // Not a lock question (permissions, a read-only disk): said in words, as the writer would.
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw unwritable(destination, error, option);
      }
      const holder = readHolder(file);
      if (!holder && isFresh(file)) {
        // Just made by a run that is writing its pid into it right now.
        throw new OutputLockedError(
          `Another lead-enrich run is starting to write the ${what} ${path.resolve(destination)}: wait for it to finish, or write elsewhere (${PATH_GIVEN(option)})`,
        );
      }
      if (holder && !isStale(file, holder)) {
        throw new OutputLockedError(
          `Another lead-enrich run is writing the ${what} ${path.resolve(destination)} (pid ${holder.pid} on ${holder.host}, since ${holder.started}): ` +
            `wait for it to finish, or write elsewhere (${PATH_GIVEN(option)})`,
        );
      }
      // Stale (or half-written by a run that was killed just then): taken over.
      fs.rmSync(file, { force: true });
    }
    throw new OutputLockedError(`Cannot take the lock on the ${what} ${destination} (${file}): another run keeps taking it; try again`);
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    clearInterval(this.#timer);
    // Only our own: a lock taken over meanwhile (ours judged stale) belongs to that run now.
    if (readHolder(this.#file)?.pid === process.pid) fs.rmSync(this.#file, { force: true });
  }
}

function unwritable(destination: string, error: unknown, option: OutputOption): UnwritableOutputError {
  return new UnwritableOutputError(`Cannot write ${destination}: ${whyNotWritable(error)}; choose another path ${PATH_GIVEN(option)}`);
}

function readHolder(file: string): Holder | undefined {
  try {
    const holder = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Holder>;
    if (typeof holder.pid !== 'number' || typeof holder.host !== 'string') return undefined;
    return { pid: holder.pid, host: holder.host, started: String(holder.started ?? 'an unknown time') };
  } catch {
    return undefined;
  }
}

/** Made less than a few seconds ago. */
function isFresh(file: string): boolean {
  try {
    return Date.now() - fs.statSync(file).mtimeMs < 5_000;
  } catch {
    return false;
  }
}

function isStale(file: string, holder: Holder): boolean {
  if (holder.host === os.hostname()) return holder.pid !== process.pid && !isAlive(holder.pid);
  try {
    return Date.now() - fs.statSync(file).mtimeMs > STALE_MS;
  } catch {
    return true;
  }
}

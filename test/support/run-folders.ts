// The run's own temporary folder (the TMPDIR of every test and of the processes they start), named
// for the vitest process that owns it: `lead-enrich-suite-<pid>.<start>-XXXXXX`, <start> being
// when that process started (clock ticks since boot, from /proc; 0 where there is none), so that a
// pid given out again to another process is not taken for the owner. A run killed before its
// teardown leaves its folder behind: the next run removes the folders whose owner is gone, and
// first unmounts what a test had mounted in one (the small disks of reliability/durability.test.ts).
import fs from 'node:fs';
import path from 'node:path';
import { startOf } from '../helpers/process-table.js';
import { runChecked } from '../helpers/processes.js';

const PREFIX = 'lead-enrich-suite-';
const NAME = /^lead-enrich-suite-(\d+)\.(\d+)-/;

/** A new run folder in `outer`, owned by this process. */
export function makeRunFolder(outer: string): string {
  return fs.mkdtempSync(path.join(outer, `${PREFIX}${process.pid}.${startOf(process.pid) ?? '0'}-`));
}

/**
 * Removes this run's folder at its end. A Node process writes its compile cache (NODE_COMPILE_CACHE,
 * in this folder) as it exits, Node 22 all of it at once: a vitest worker still exiting as the
 * teardown runs adds files after the removal listed the folder, and its rmdir fails with ENOTEMPTY
 * (seen on Node 22 after help-examples.test.ts, whose worker loads ExcelJS). rmSync's own retries
 * (kept, for a busy file) do not list the folder again; this does, until no process writes (at
 * most `attempts` times).
 */
export async function removeRunFolder(folder: string, attempts = 20): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      fs.rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOTEMPTY' || attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** Whether the run that owns `folder` (a run folder's path or name) has ended; false for any other name. */
export function isDeadRun(folder: string): boolean {
  const owner = NAME.exec(path.basename(folder));
  if (!owner) return false;
  const pid = Number(owner[1]);
  if (fs.existsSync('/proc/self/stat')) return startOf(pid) !== owner[2];
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

/** The mount points inside `folder`, deepest first (from /proc/self/mounts; none where there is none). */
function mountsIn(folder: string): string[] {
  let table: string;
  try {
    table = fs.readFileSync('/proc/self/mounts', 'utf8');
  } catch {
    return [];
  }
  // The mount point is the second field, its spaces written as \040.
  const points = table.split('\n').map((line) => (line.split(' ')[1] ?? '').replace(/\\040/g, ' '));
  return points.filter((point) => point.startsWith(`${folder}${path.sep}`)).sort((a, b) => b.length - a.length);
}

/** The run folders in `outer` whose run has ended (their paths). */
export function deadRunFolders(outer: string): string[] {
  return fs
    .readdirSync(outer)
    .filter((entry) => entry.startsWith(PREFIX) && isDeadRun(entry))
    .map((entry) => path.join(outer, entry));
}

/** Removes the run folders in `outer` whose run has ended: the names removed, and why others could not be. */
export function removeDeadRunFolders(outer: string): { removed: string[]; failed: string[] } {
  const removed: string[] = [];
  const failed: string[] = [];
  for (const folder of deadRunFolders(outer)) {
    const name = path.basename(folder);
    try {
      for (const point of mountsIn(folder)) runChecked('umount', ['-l', point]);
      fs.rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
      removed.push(name);
    } catch (error) {
      failed.push(`${name} (${(error as Error).message.trim()})`);
    }
  }
  return { removed, failed };
}

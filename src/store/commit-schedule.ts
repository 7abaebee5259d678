// When the answers a ResultStore holds in memory are committed (result-store.ts, "Durability
// model"). With an interval of 0 (an enrich run): the answers that came in one turn of the event
// loop are committed together at its end (setImmediate), and committed() lets a run wait for that
// commit before it pays for another answer. With an interval: once the oldest waiting answer is
// that old (checked on every put, and by a one-shot timer for the last ones), or when a batch is full.
import type { StoreFailedError } from '../api/errors.js';

interface Waiter {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface CommitScheduleSettings {
  intervalMs: number;
  batchSize: number;
  /** Commits what waits; throws a StoreFailedError when it cannot (the answers keep waiting). */
  commit: () => void;
  /** Whether answers still wait to be committed (a failed timer commit is then tried again). */
  waiting: () => boolean;
}

export class CommitSchedule {
  readonly #settings: CommitScheduleSettings;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  /** What committed() handed out for the commit at the end of this turn. */
  #turn: Waiter | undefined;
  /** Told when a commit made after put() returned (at the end of the turn, or by the timer) fails. */
  readonly #failureListeners = new Set<(error: StoreFailedError) => void>();
  /** When the oldest waiting answer was queued. */
  #since = 0;

  constructor(settings: CommitScheduleSettings) {
    this.#settings = settings;
  }

  /** An answer was queued (`count` wait now; `first`: none did before). True: commit it at once. */
  queued(first: boolean, count: number, now: number): boolean {
    const { intervalMs, batchSize } = this.#settings;
    if (first) this.#since = now;
    if (count >= batchSize || (intervalMs > 0 && now - this.#since >= intervalMs)) return true;
    if (intervalMs === 0) {
      this.#immediate ??= setImmediate(this.#onImmediate);
    } else if (this.#timer === undefined) {
      this.#timer = setTimeout(this.#onTimer, intervalMs);
      // Never keeps the process alive; the 'exit' hook and close() take care of the rest.
      this.#timer.unref();
    }
    return false;
  }

  /**
   * Undefined when no answer waits for the commit at the end of this turn; else a promise that
   * commit settles (rejected with its StoreFailedError). A run waits for it before it pays for
   * another answer: a full disk then costs only the requests in flight, and the answers of one
   * turn still go in one commit.
   */
  committed(): Promise<void> | undefined {
    if (this.#immediate === undefined) return undefined;
    if (this.#turn === undefined) {
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<void>((yes, no) => {
        resolve = yes;
        reject = no;
      });
      this.#turn = { promise, resolve, reject };
    }
    return this.#turn.promise;
  }

  /** A commit begins (whoever asked for it): nothing stays scheduled; returns who waits for it. */
  begin(): Pick<Waiter, 'resolve' | 'reject'> | undefined {
    this.cancel();
    const turn = this.#turn;
    this.#turn = undefined;
    return turn;
  }

  /** Calls `listener` when a scheduled commit fails. Returns the way to stop listening. */
  onFailure(listener: (error: StoreFailedError) => void): () => void {
    this.#failureListeners.add(listener);
    return () => this.#failureListeners.delete(listener);
  }

  cancel(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#immediate !== undefined) {
      clearImmediate(this.#immediate);
      this.#immediate = undefined;
    }
  }

  readonly #onImmediate = (): void => {
    this.#immediate = undefined;
    try {
      this.#settings.commit();
    } catch (error) {
      // The answers keep waiting; the next put() tries again. Whoever listens stops sending.
      for (const listener of this.#failureListeners) listener(error as StoreFailedError);
    }
  };

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    try {
      this.#settings.commit();
    } catch {
      // The answers keep waiting (the file locked beyond busy_timeout, a full disk): try again
      // later. The error reaches the caller through the next synchronous commit (a full batch,
      // flush(), close()) instead of crashing the process from a timer.
      if (this.#settings.waiting() && this.#timer === undefined) {
        this.#timer = setTimeout(this.#onTimer, this.#settings.intervalMs);
        this.#timer.unref();
      }
    }
  };
}

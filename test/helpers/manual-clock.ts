// A clock that moves only when told (core/clock.ts's Clock): the parts of the request path that
// wait take it, so their tests make no sleep and cannot be slowed by a busy machine.
import type { Clock } from '../../src/core/clock.js';

interface Timer {
  at: number;
  resolve: () => void;
}

export class ManualClock implements Clock {
  #now: number;
  #timers: Timer[] = [];
  /** Every wait asked for, in ms, in order. */
  readonly waits: number[] = [];

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.waits.push(ms);
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer: Timer = { at: this.#now + ms, resolve };
      this.#timers.push(timer);
      signal?.addEventListener(
        'abort',
        () => {
          this.#timers = this.#timers.filter((t) => t !== timer);
          resolve();
        },
        { once: true },
      );
    });
  }

  /** Timers not yet due. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Moves time on by `ms`, firing each timer due on the way, in order, letting its promise chain run. */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      await settle();
      const due = this.#timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.resolve();
    }
    this.#now = end;
    await settle();
  }
}

/** Lets every promise chain that can run, run (a macrotask turn). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

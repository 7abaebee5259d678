// Time, injected: the parts that wait (retries, the 429 pause, credit readings) take a Clock, so
// their tests run on a manual one with no sleeps (test/helpers/manual-clock.ts).

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Waits `ms` on a real timer; resolves early (never rejects) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export const systemClock: Clock = { now: () => Date.now(), sleep };

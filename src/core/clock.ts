// Time, injected: the parts that wait (retries, the 429 pause, credit readings) take a Clock, so
// their tests run on a manual one with no sleeps (test/helpers/manual-clock.ts).

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * The longest delay one Node timer takes (2^31-1 ms, about 24.8 days): a longer one warns
 * (TimeoutOverflowWarning) and fires at once, which would end a 30-day --patience at its start.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Waits `ms` on a real timer (several in a row past MAX_TIMER_MS); resolves early (never rejects) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    let timer = arm(ms);
    function arm(left: number): NodeJS.Timeout {
      return left > MAX_TIMER_MS ? setTimeout(() => (timer = arm(left - MAX_TIMER_MS)), MAX_TIMER_MS) : setTimeout(done, left);
    }
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

export const systemClock: Clock = { now: () => Date.now(), sleep };

// The circuit breaker's turns that breaker.test.ts does not walk through: a probe that was never
// sent (the gate stopped, the reserve refused) passes its turn on, or ends the wait past the
// patience; a probe's turn with nobody held goes to the next lookup that comes; how long the API
// has been down while it still is; and no waiting lookup leaves a listener on its stop signal.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ApiUnavailableError } from '../../src/api/errors.js';
import { GateStoppedError } from '../../src/lookup/rate/gate-errors.js';
import { breakerOf, fail, lastProbeAtPatienceEnd, outage } from '../helpers/breaker.js';
import { settle } from '../helpers/manual-clock.js';

/** Whether `promise` has settled once the microtasks and the next turn have run. */
async function settledNow(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await settle();
  return settled;
}

describe('while the API is up', () => {
  it('every lookup goes at once, as one like any other', async () => {
    const { breaker } = breakerOf();
    await expect(breaker.admit()).resolves.toBe('closed');
  });
});

describe('a probe that was not sent', () => {
  it('before the patience ends: the turn passes to the next held lookup, a probe interval later; the API is not given up on', async () => {
    const { breaker, clock } = breakerOf();
    fail(breaker, 8, 8);
    const [first, second] = [breaker.admit(), breaker.admit()];
    await clock.advance(1_000);
    await expect(first).resolves.toBe('probe');
    expect(breaker.failed('probe', new GateStoppedError(), 'k0')).toBe('retry');
    expect(breaker.gaveUp).toBe(false);
    await clock.advance(999);
    expect(await settledNow(second)).toBe(false);
    await clock.advance(1);
    await expect(second).resolves.toBe('probe');
  });

  it('as the last probe, past the patience: the wait ends, given up on', async () => {
    const { breaker, events } = await lastProbeAtPatienceEnd();
    expect(breaker.failed('probe', new GateStoppedError(), 'k2')).toBe('retry');
    expect(breaker.gaveUp).toBe(true);
    expect(events.map((e) => e.kind)).toEqual(['unavailable', 'gave_up']);
    await expect(breaker.admit()).rejects.toBeInstanceOf(ApiUnavailableError);
  });
});

describe("a probe's turn with no lookup held", () => {
  it('goes to the next lookup that comes, at once', async () => {
    const { breaker, clock } = breakerOf();
    fail(breaker, 8, 8);
    await clock.advance(1_000);
    await expect(breaker.admit()).resolves.toBe('probe');
    // One probe at a time: the next lookup is held while it is out.
    expect(await settledNow(breaker.admit())).toBe(false);
  });
});

describe('how long the API has been down', () => {
  it('counts the outage still going on, from when it began', async () => {
    const { breaker, clock } = breakerOf();
    fail(breaker, 8, 8);
    expect(breaker.downMs).toBe(0);
    await clock.advance(700);
    expect(breaker.downMs).toBe(700);
  });
});

describe("a held lookup's stop signal", () => {
  it('a lookup stopped while held leaves its turn as the probe to the next one held', async () => {
    const { breaker, clock } = breakerOf();
    fail(breaker, 8, 8);
    const stop = new AbortController();
    const stopped = breaker.admit(stop.signal);
    const next = breaker.admit();
    stop.abort();
    await expect(stopped).resolves.toBe('closed');
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    await clock.advance(1_000);
    expect(await settledNow(next)).toBe(true);
    await expect(next).resolves.toBe('probe');
  });

  it('a lookup whose run was stopped before it came is let go at once', async () => {
    const { breaker } = breakerOf();
    fail(breaker, 8, 8);
    const stop = new AbortController();
    stop.abort();
    expect(await settledNow(breaker.admit(stop.signal))).toBe(true);
    await expect(breaker.admit(stop.signal)).resolves.toBe('closed');
  });

  it('keeps no listener once the lookup is let go as the probe', async () => {
    const { breaker, clock } = breakerOf();
    fail(breaker, 8, 8);
    const stop = new AbortController();
    const held = breaker.admit(stop.signal);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    await clock.advance(1_000);
    await expect(held).resolves.toBe('probe');
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('keeps no listener once the lookup is refused (the API given up on)', async () => {
    const { breaker, clock } = breakerOf(2_000);
    fail(breaker, 8, 8);
    const stop = new AbortController();
    const first = breaker.admit();
    const held = breaker.admit(stop.signal);
    held.catch(() => {});
    await clock.advance(1_000);
    await expect(first).resolves.toBe('probe');
    breaker.failed('probe', new GateStoppedError(), 'k0');
    // The next probe is the held lookup's (at 2 s, the patience's end); it is not sent either.
    await clock.advance(1_000);
    await expect(held).resolves.toBe('probe');
    const third = breaker.admit(stop.signal);
    third.catch(() => {});
    breaker.failed('probe', new GateStoppedError(), 'k1');
    await expect(third).rejects.toBeInstanceOf(ApiUnavailableError);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });
});

describe('a lookup let through before the API went down, then not sent', () => {
  it("changes nothing of the probes' times", async () => {
    const { breaker, clock } = breakerOf();
    fail(breaker, 8, 8);
    const [first, second] = [breaker.admit(), breaker.admit()];
    await clock.advance(500);
    expect(breaker.failed('closed', new GateStoppedError(), 'k9')).toBe('retry');
    await clock.advance(500);
    await expect(first).resolves.toBe('probe');
    breaker.failed('probe', outage(), 'k0');
    // The next probe 1.5 s after the first, as if the lookup had never been.
    await clock.advance(1_499);
    expect(await settledNow(second)).toBe(false);
    await clock.advance(1);
    await expect(second).resolves.toBe('probe');
  });
});

// The circuit breaker's turns that breaker.test.ts does not walk through: a probe that was never
// sent (the gate stopped, the reserve refused) passes its turn on, or ends the wait past the
// patience; a probe's turn with nobody held goes to the next lookup that comes; how long the API
// has been down while it still is; and no waiting lookup leaves a listener on its stop signal.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ApiUnavailableError, BadRequestError, ClientClosedError } from '../../src/api/errors.js';
import { CircuitBreaker } from '../../src/lookup/request-path/breaker.js';
import { GateStoppedError } from '../../src/lookup/rate/gate-errors.js';
import { breakerOf, fail, lastProbeAtPatienceEnd, outage, probeOut } from '../helpers/breaker.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';

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

describe('a probe that ends after the API was given up on', () => {
  // The last probe went at the patience's end and was not answered within a probe interval: the API
  // is given up on while it is still out. Its end, however it comes, is news to no one: told once,
  // the time down counted once.
  async function givenUpWithProbeOut() {
    const given = await lastProbeAtPatienceEnd();
    await given.clock.advance(1_000);
    expect(given.breaker.gaveUp).toBe(true);
    expect(given.events).toEqual([expect.objectContaining({ kind: 'unavailable' }), { kind: 'gave_up', downMs: 4_000 }]);
    return given;
  }

  it('failing with an outage: its call waits and is refused like the rest', async () => {
    const { breaker, clock, events } = await givenUpWithProbeOut();
    await clock.advance(500);
    expect(breaker.failed('probe', outage(), 'k2')).toBe('hold');
    expect(events.map((e) => e.kind)).toEqual(['unavailable', 'gave_up']);
    expect(breaker.downMs).toBe(4_000);
    await expect(breaker.admit()).rejects.toBeInstanceOf(ApiUnavailableError);
  });

  it('not sent after all (the gate stopped): nothing more is told', async () => {
    const { breaker, clock, events } = await givenUpWithProbeOut();
    await clock.advance(500);
    expect(breaker.failed('probe', new GateStoppedError(), 'k2')).toBe('retry');
    expect(events.map((e) => e.kind)).toEqual(['unavailable', 'gave_up']);
    expect(breaker.downMs).toBe(4_000);
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

describe('what an outage leaves behind', () => {
  it('the API back: its event says how long it was down', async () => {
    const { breaker, clock, events } = await probeOut();
    await clock.advance(300);
    breaker.answered();
    expect(events).toEqual([expect.objectContaining({ kind: 'unavailable' }), { kind: 'back', downMs: 1_300 }]);
  });

  it('given up on: no wait of its own left behind, and how long it was down still said', async () => {
    const { breaker, clock } = breakerOf(3_000);
    fail(breaker, 8, 8);
    await clock.advance(3_000 + 1_000);
    expect(breaker.gaveUp).toBe(true);
    expect(clock.pending).toBe(0);
    expect(breaker.downMs).toBe(4_000);
  });

  it('without anyone told (no onChange): opens, gives up and says so to the lookups alone', async () => {
    const clock = new ManualClock();
    const breaker = new CircuitBreaker({ clock, patienceMs: 1_000 });
    fail(breaker, 8, 8);
    const held = breaker.admit();
    held.catch(() => {});
    await clock.advance(1_000);
    await expect(held).resolves.toBe('probe');
    // Out at the deadline, it fails after it: the last probe is owed, and nobody takes it.
    breaker.failed('probe', outage(), 'k0');
    await clock.advance(1_000);
    expect(breaker.gaveUp).toBe(true);
    await expect(breaker.admit()).rejects.toBeInstanceOf(ApiUnavailableError);
  });

  it('back up, it counts afresh: eight failures in a row open it again, seven do not', async () => {
    const { breaker, clock } = await probeOut();
    breaker.answered();
    expect(fail(breaker, 7, 7)).toEqual(new Array(7).fill('retry'));
    expect(breaker.unavailableSince).toBeUndefined();
    expect(fail(breaker, 1, 1)).toEqual(['hold']);
  });

  it('an answer between failures breaks their run: seven, an answer, one more do not open it; nor an answer, then seven', () => {
    const { breaker } = breakerOf();
    fail(breaker, 7, 7);
    breaker.answered();
    expect(fail(breaker, 1, 1)).toEqual(['retry']);
    expect(breaker.unavailableSince).toBeUndefined();
    const other = breakerOf().breaker;
    fail(other, 3, 3);
    other.answered();
    expect(fail(other, 7, 7)).toEqual(new Array(7).fill('retry'));
    expect(other.unavailableSince).toBeUndefined();
  });

  it('back up, the last twenty are counted afresh: eleven failed of the next nineteen do not open it', async () => {
    const { breaker, clock } = await probeOut();
    breaker.answered();
    for (let i = 0; i < 19; i += 1) {
      if (i % 2 === 1 && i < 16) breaker.answered();
      else breaker.failed('closed', outage(), `k${i}`);
    }
    expect(breaker.unavailableSince).toBeUndefined();
  });

  it('a refusal (an answer all the same) ends a run of failures, and, as the probe, the outage', async () => {
    const { breaker, clock, events } = breakerOf();
    fail(breaker, 7, 7);
    expect(breaker.failed('closed', new BadRequestError('bad', [], { status: 400 }), 'k9')).toBe('retry');
    expect(fail(breaker, 1, 1)).toEqual(['retry']);
    fail(breaker, 7, 7);
    const probe = breaker.admit();
    await clock.advance(1_000);
    await expect(probe).resolves.toBe('probe');
    expect(breaker.failed('probe', new BadRequestError('bad', [], { status: 400 }), 'k0')).toBe('retry');
    expect(events.map((e) => e.kind)).toEqual(['unavailable', 'back']);
  });
});

describe('twelve of the last twenty failed', () => {
  /** `failures` failures of the last twenty (from many keys), never eight in a row. */
  function mixed(failures: number) {
    const { breaker } = breakerOf();
    const answersAt = new Set(Array.from({ length: 20 - failures }, (_, i) => Math.floor(((i + 0.5) * 20) / (20 - failures))));
    for (let i = 0; i < 20; i += 1) {
      if (answersAt.has(i)) breaker.answered();
      else breaker.failed('closed', outage(), `k${i}`);
    }
    return breaker;
  }

  it('opens it (60 %)', () => {
    expect(mixed(12).unavailableSince).toBeDefined();
  });

  it('eleven do not', () => {
    expect(mixed(11).unavailableSince).toBeUndefined();
  });
});

describe('the last probe and its grace', () => {
  it('a last probe that is never answered: given up on one probe interval later', async () => {
    const { breaker, clock, events } = breakerOf(3_000);
    fail(breaker, 8, 8);
    const calls = [breaker.admit(), breaker.admit(), breaker.admit()];
    await clock.advance(1_000);
    breaker.failed('probe', outage(), 'k0');
    await clock.advance(1_500);
    breaker.failed('probe', outage(), 'k1');
    await clock.advance(500);
    await expect(calls[2]).resolves.toBe('probe');
    await clock.advance(999);
    expect(breaker.gaveUp).toBe(false);
    await clock.advance(1);
    expect(breaker.gaveUp).toBe(true);
    expect(events.map((e) => e.kind)).toEqual(['unavailable', 'gave_up']);
  });

  it('the grace of a probe out at the deadline does not cut short the last probe sent after it failed', async () => {
    const { breaker, clock } = breakerOf(3_000);
    fail(breaker, 8, 8);
    const first = breaker.admit();
    await clock.advance(1_000);
    await expect(first).resolves.toBe('probe');
    breaker.failed('probe', outage(), 'k0');
    const second = breaker.admit();
    const last = breaker.admit();
    await clock.advance(1_500);
    await expect(second).resolves.toBe('probe');
    // Out across the deadline (3 s): its grace runs to 4 s. It fails at 3.6 s: the last probe goes.
    await clock.advance(1_100);
    breaker.failed('probe', outage(), 'k1');
    await expect(last).resolves.toBe('probe');
    // 4 s: the first grace ends, the last probe's (to 4.6 s) still runs.
    await clock.advance(400);
    expect(breaker.gaveUp).toBe(false);
    await clock.advance(600);
    expect(breaker.gaveUp).toBe(true);
  });

  it('a probe failing while another is out is not taken for the one out: the last probe still waits for it', async () => {
    const { breaker, clock } = breakerOf(3_000);
    fail(breaker, 8, 8);
    const first = breaker.admit();
    const waiting = breaker.admit();
    await clock.advance(1_000);
    await expect(first).resolves.toBe('probe');
    // A lookup let through before it opened fails while the probe is out.
    expect(breaker.failed('closed', outage(), 'k8')).toBe('hold');
    await clock.advance(2_000);
    // The deadline with the probe still out: no second probe, the waiting lookup still held.
    expect(await settledNow(waiting)).toBe(false);
  });

  it('a probe turn that comes while the last probe is out sends nothing more', async () => {
    const { breaker, clock } = breakerOf(4_500);
    fail(breaker, 8, 8);
    const calls = [breaker.admit(), breaker.admit(), breaker.admit(), breaker.admit()];
    await clock.advance(1_000);
    breaker.failed('probe', outage(), 'k0');
    await clock.advance(1_500);
    breaker.failed('probe', outage(), 'k1');
    // The next turn would be at 4.75 s; the patience ends at 4.5 s: the last probe goes then.
    await clock.advance(2_000);
    await expect(calls[2]).resolves.toBe('probe');
    await clock.advance(250);
    expect(await settledNow(calls[3]!)).toBe(false);
  });
});

describe('a second outage', () => {
  it('after the API came back, the next outage sends its probes as the first did', async () => {
    const { breaker, clock, events } = await probeOut();
    breaker.answered();
    expect(clock.pending).toBe(0);
    fail(breaker, 8, 8);
    const again = breaker.admit();
    await clock.advance(1_000);
    await expect(again).resolves.toBe('probe');
    expect(events.map((e) => e.kind)).toEqual(['unavailable', 'back', 'unavailable']);
  });
});

describe('what the lookups are told once the API is given up on', () => {
  it('that the API was unavailable for longer than the patience, in seconds', async () => {
    const { breaker, clock } = breakerOf(3_000);
    fail(breaker, 8, 8);
    await clock.advance(4_000);
    await expect(breaker.admit()).rejects.toThrow(/^not looked up: the API was unavailable for longer than the patience \(3 s\)$/);
  });
});

describe('what shows the API is up, and what does not', () => {
  it('a failure that is no answer and no outage (the client closed) is not the API answering', async () => {
    const { breaker, clock, events } = await probeOut();
    expect(breaker.failed('probe', new ClientClosedError(), 'k0')).toBe('retry');
    expect(events.map((e) => e.kind)).toEqual(['unavailable']);
  });

  it('eight failures in a row from exactly five keys open it', () => {
    const { breaker } = breakerOf();
    expect(fail(breaker, 8, 5).at(-1)).toBe('hold');
  });
});

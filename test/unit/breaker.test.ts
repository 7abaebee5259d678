// The circuit breaker on its own (request-path/breaker.ts), on a manual clock: when it opens, one
// probe at a time at growing intervals, the held lookups released when the API answers, given up
// after the patience; and through the request path, a held lookup uses none of its retries.
import { describe, expect, it } from 'vitest';
import { ApiUnavailableError, BadRequestError, BadResponseError, RateLimitedError, UnauthorizedError } from '../../src/api/errors.js';
import { isUnknownHost, networkFailure } from '../../src/api/network-errors.js';
import type { Availability } from '../../src/lookup/request-path/breaker.js';
import { RequestPath, type Attempt } from '../../src/lookup/request-path/request-path.js';
import { RetryPolicy } from '../../src/lookup/request-path/retry-policy.js';
import { HeldError } from '../../src/lookup/request-path/breaker.js';
import { withBreaker } from '../../src/lookup/request-path/with-breaker.js';
import { GateStoppedError } from '../../src/lookup/rate/gate-errors.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { breakerOf, fail, lastProbeAtPatienceEnd, outage } from '../helpers/breaker.js';

describe('CircuitBreaker: when it opens', () => {
  it('after 8 outage failures in a row from 5 keys or more', () => {
    const { breaker, events } = breakerOf();
    expect(fail(breaker, 7, 7)).toEqual(new Array(7).fill('retry'));
    expect(breaker.unavailableSince).toBeUndefined();
    expect(fail(breaker, 1, 1)).toEqual(['hold']);
    expect(events).toMatchObject([{ kind: 'unavailable', failure: '503' }]);
  });

  it('not for a few keys retried (failures of one row are its own)', () => {
    const { breaker } = breakerOf();
    expect(fail(breaker, 40, 4).every((verdict) => verdict === 'retry')).toBe(true);
    expect(breaker.unavailableSince).toBeUndefined();
  });

  it('not for a flaky API: a failure here and there, answers between', () => {
    const { breaker } = breakerOf();
    for (let i = 0; i < 500; i += 1) {
      if (i % 5 === 0) expect(breaker.failed('closed', outage(), `k${i}`)).toBe('retry');
      else breaker.answered();
    }
    expect(breaker.unavailableSince).toBeUndefined();
  });

  it('when most of the last 20 failed, if not in a row', () => {
    const { breaker } = breakerOf();
    for (let i = 0; i < 20; i += 1) {
      if (i % 3 === 2) breaker.answered();
      else breaker.failed('closed', outage(), `k${i}`);
    }
    expect(breaker.unavailableSince).toBeDefined();
  });

  it('never for answers: a 400, a 429, a body of the wrong shape', () => {
    const { breaker } = breakerOf();
    for (const error of [
      new BadRequestError('bad', [], { status: 400 }),
      new RateLimitedError('429', undefined, { status: 429 }),
      new BadResponseError('shape', { status: 200 }),
    ]) {
      expect(fail(breaker, 20, 20, error).every((verdict) => verdict === 'retry')).toBe(true);
    }
    expect(breaker.unavailableSince).toBeUndefined();
  });
});

describe('CircuitBreaker: while open', () => {
  it('holds every lookup, lets one probe go at 1 s, 1.5 s, 2.25 s ..., and releases them all when a probe is answered', async () => {
    const { breaker, clock, events } = breakerOf();
    fail(breaker, 8, 8);
    const admitted: string[] = [];
    const held = Array.from({ length: 5 }, (_, i) => breaker.admit().then((a) => admitted.push(`${i}:${a}`)));
    await clock.advance(999);
    expect(admitted).toEqual([]);
    await clock.advance(1);
    expect(admitted).toEqual(['0:probe']);
    // The probe fails: the next one 1.5 s later, the others still held.
    expect(breaker.failed('probe', outage(), 'k0')).toBe('hold');
    const again = breaker.admit().then((a) => admitted.push(`0again:${a}`));
    await clock.advance(1_499);
    expect(admitted).toEqual(['0:probe']);
    await clock.advance(1);
    expect(admitted).toEqual(['0:probe', '1:probe']);
    breaker.failed('probe', outage(), 'k1');
    await clock.advance(2_250);
    expect(admitted).toHaveLength(3);
    // Answered: the API is back, every held lookup goes.
    breaker.answered();
    await Promise.all([...held, again]);
    expect(admitted.slice(3).every((a) => a.endsWith(':closed'))).toBe(true);
    expect(events.map((e) => e.kind)).toEqual(['unavailable', 'back']);
    expect(breaker.unavailableSince).toBeUndefined();
    expect(breaker.downMs).toBe(1_000 + 1_500 + 2_250);
  });

  it('a lookup admitted before it opened is held at the gate (holds), the probe is not', () => {
    const { breaker } = breakerOf();
    expect(breaker.holds('closed')).toBe(false);
    fail(breaker, 8, 8);
    expect(breaker.holds('closed')).toBe(true);
    expect(breaker.holds('probe')).toBe(false);
  });

  it('gives up after the patience: the held lookups, and every later one, fail with ApiUnavailableError', async () => {
    const { breaker, clock, events } = breakerOf(5_000);
    fail(breaker, 8, 8);
    const [first, second, third] = [breaker.admit(), breaker.admit(), breaker.admit()];
    third.catch(() => {});
    await clock.advance(1_000);
    await expect(first).resolves.toBe('probe');
    breaker.failed('probe', outage(), 'k0');
    await clock.advance(1_500);
    await expect(second).resolves.toBe('probe'); // and it never comes back
    // The patience ends at 5 s with that probe out: its answer is waited for one probe interval.
    await clock.advance(2_500);
    expect(breaker.gaveUp).toBe(false);
    await clock.advance(1_000);
    await expect(third).rejects.toBeInstanceOf(ApiUnavailableError);
    await expect(breaker.admit()).rejects.toBeInstanceOf(ApiUnavailableError);
    expect(breaker.gaveUp).toBe(true);
    expect(events.map((e) => e.kind)).toEqual(['unavailable', 'gave_up']);
    expect(events[1]).toMatchObject({ downMs: 6_000 });
  });

  it("the last probe goes at the patience's end: an API back by then is not given up on", async () => {
    // The next probe would come at 4.75 s, past the patience: one goes at 3 s instead.
    const { breaker, events } = await lastProbeAtPatienceEnd();
    breaker.answered();
    expect(events.map((e) => e.kind)).toEqual(['unavailable', 'back']);
    expect(breaker.gaveUp).toBe(false);
  });

  it('a probe sent before the deadline that fails after it is not the last: one more goes at once (probes drifting on a slow link)', async () => {
    const { breaker, clock, events } = breakerOf(3_000);
    fail(breaker, 8, 8);
    const first = breaker.admit();
    await clock.advance(1_000);
    await expect(first).resolves.toBe('probe');
    breaker.failed('probe', outage(), 'k0');
    const second = breaker.admit();
    await clock.advance(1_500);
    await expect(second).resolves.toBe('probe');
    // Out across the deadline (a quarter of a second's answer), failing just after it.
    await clock.advance(600);
    expect(breaker.failed('probe', outage(), 'k1')).toBe('hold');
    expect(breaker.gaveUp).toBe(false);
    // Its own call comes back at once and is the last probe: answered, the API is back.
    await expect(breaker.admit()).resolves.toBe('probe');
    breaker.answered();
    expect(events.map((e) => e.kind)).toEqual(['unavailable', 'back']);
  });

  it('the last probe failing ends the wait at once', async () => {
    const { breaker, events } = await lastProbeAtPatienceEnd();
    expect(breaker.failed('probe', outage(), 'k2')).toBe('hold');
    expect(breaker.gaveUp).toBe(true);
    expect(events.map((e) => e.kind)).toEqual(['unavailable', 'gave_up']);
    expect(events[1]).toMatchObject({ downMs: 3_000 });
  });

  it('an abort lets a held lookup go (the stop decides what it becomes)', async () => {
    const { breaker } = breakerOf();
    fail(breaker, 8, 8);
    const abort = new AbortController();
    const held = breaker.admit(abort.signal);
    abort.abort();
    await expect(held).resolves.toBe('closed');
  });
});

/** A request path with a breaker, on a manual clock, that nothing stops. */
function pathWithBreaker(
  attempt: Attempt,
  clock: ManualClock,
  retries: number,
  breaker: { patienceMs: number; onChange?: (e: Availability) => void },
): RequestPath {
  const never = new AbortController().signal;
  return new RequestPath(attempt, {
    retry: new RetryPolicy({ retries, baseDelayMs: 10, clock }),
    windowMs: 60_000,
    noMoreRequests: never,
    halt: never,
    clock,
    breaker,
  });
}

describe('the breaker on the request path', () => {
  it('a lookup held while the API is down uses none of its retries, and is looked up once it is back', async () => {
    const clock = new ManualClock();
    let down = true;
    let sent = 0;
    const attempt: Attempt = async () => {
      sent += 1;
      if (down) throw outage();
      return { data: { lead: { name: 'x' } }, status: 200, rate: undefined };
    };
    const path = pathWithBreaker(attempt, clock, 1, { patienceMs: 600_000 });
    const lookups = Array.from({ length: 10 }, (_, i) => path.lookup('lookup_email', `p${i}@x.test`));
    for (let i = 0; i < 20; i += 1) await clock.advance(10);
    expect(path.breaker?.unavailableSince).toBeDefined();
    const sentWhileDown = sent;
    await clock.advance(10_000);
    expect(sent - sentWhileDown).toBeLessThanOrEqual(5); // the probes, at 1, 1.5, 2.25, 3.4 s
    down = false;
    for (let i = 0; i < 100 && path.breaker?.unavailableSince !== undefined; i += 1) await clock.advance(1_000);
    await Promise.all(lookups);
    await settle();
    // No lookup failed for good: the retries a held lookup would have spent were not spent.
    expect(path.counts.retries).toBeLessThanOrEqual(8);
  });
});

describe('the first account reads (an API down when the run starts)', () => {
  const refused = () =>
    networkFailure(
      { code: 'ECONNREFUSED' },
      { host: '127.0.0.1', port: 9, path: '/account/credits' },
      undefined,
      Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    );
  const noSuchHost = () =>
    networkFailure(
      { code: 'ENOTFOUND' },
      { host: 'api.invalid', port: 443, path: '/account/credits' },
      undefined,
      Object.assign(new Error('x'), { code: 'ENOTFOUND' }),
    );

  it('one failure of the call alone opens it; a host that does not exist does not (no wait mends it), nor a 401', () => {
    const { breaker, events } = breakerOf();
    expect(isUnknownHost(noSuchHost())).toBe(true);
    expect(isUnknownHost(refused())).toBe(false);
    expect(breaker.failed('closed', noSuchHost(), 'credits', true)).toBe('retry');
    expect(breaker.failed('closed', new UnauthorizedError('401', { status: 401 }), 'credits', true)).toBe('retry');
    expect(breaker.unavailableSince).toBeUndefined();
    expect(breaker.failed('closed', refused(), 'credits', true)).toBe('hold');
    expect(events).toMatchObject([{ kind: 'unavailable', failure: expect.stringContaining('connection refused') }]);
  });

  it('mid-run, a host the DNS no longer knows is an outage like any other: enough keys failing so open it', () => {
    const { breaker } = breakerOf();
    expect(fail(breaker, 7, 7, noSuchHost())).toEqual(Array(7).fill('retry'));
    expect(breaker.failed('closed', noSuchHost(), 'k7')).toBe('hold');
    expect(breaker.failure).toContain('api.invalid');
  });

  it('through the request path: the read waits as the probe, none of its retries spent, and resolves once the API is back; past the patience it rejects with ApiUnavailableError', async () => {
    for (const backAfterMs of [20_000, undefined]) {
      const clock = new ManualClock();
      const start = clock.now();
      let sent = 0;
      const attempt: Attempt = async () => {
        sent += 1;
        if (backAfterMs === undefined || clock.now() - start < backAfterMs) throw refused();
        return { data: { total_remaining_credits: 10 }, status: 200, rate: undefined };
      };
      const events: Availability[] = [];
      const path = pathWithBreaker(attempt, clock, 4, { patienceMs: 60_000, onChange: (e) => events.push(e) });
      const read = path.callAtStart('credits', {}).then(
        (r) => r.data,
        (error: unknown) => error,
      );
      for (let i = 0; i < 70; i += 1) await clock.advance(1_000);
      if (backAfterMs === undefined) {
        expect(await read).toBeInstanceOf(ApiUnavailableError);
        expect(events.map((e) => e.kind)).toEqual(['unavailable', 'gave_up']);
      } else {
        expect(await read).toEqual({ total_remaining_credits: 10 });
        expect(events.map((e) => e.kind)).toEqual(['unavailable', 'back']);
      }
      // The first try, the probes at 1, 2.5, 4.75, 8.1, 13.2, 20.8, 32.2, 49.3 s and the last at the
      // patience's end (60 s): no retries.
      expect(sent).toBeLessThanOrEqual(backAfterMs === undefined ? 10 : 7);
      expect(path.counts.retries).toBe(0);
    }
  });
});

describe('a host that does not exist at the start: an address to fix, said at once', () => {
  const dnsFailure = (code: string) =>
    networkFailure(
      { code },
      { host: 'lead-api.invalid', port: 443, path: '/account/credits' },
      undefined,
      Object.assign(new Error(`getaddrinfo ${code}`), { code }),
    );

  it("the start's read is sent once: no retry, no wait, its NetworkError thrown", async () => {
    const clock = new ManualClock();
    let sent = 0;
    const attempt: Attempt = async () => {
      sent += 1;
      throw dnsFailure('ENOTFOUND');
    };
    const path = pathWithBreaker(attempt, clock, 4, { patienceMs: 60_000 });
    const error = await path.callAtStart('credits', {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isUnknownHost(error)).toBe(true);
    expect(sent).toBe(1);
    expect(path.counts.retries).toBe(0);
    expect(path.breaker?.unavailableSince).toBeUndefined();
  });

  it('a single call (account, a dry run, a LeadClient) is not retried either; EAI_AGAIN is', async () => {
    for (const [code, tries] of [
      ['ENOTFOUND', 1],
      ['EAI_AGAIN', 5],
    ] as const) {
      const clock = new ManualClock();
      let sent = 0;
      const attempt: Attempt = async () => {
        sent += 1;
        throw dnsFailure(code);
      };
      const path = pathWithBreaker(attempt, clock, 4, { patienceMs: 60_000 });
      const call = path.call('credits', {}).then(
        () => undefined,
        (e: unknown) => e,
      );
      for (let i = 0; i < 20; i += 1) await clock.advance(1_000);
      expect(await call).toMatchObject({ code: 'network' });
      expect(sent).toBe(tries);
    }
  });

  it('EAI_AGAIN (a DNS that could not answer now) may pass: the API is down, waited for as an outage', async () => {
    const clock = new ManualClock();
    let sent = 0;
    const attempt: Attempt = async () => {
      sent += 1;
      if (sent < 3) throw dnsFailure('EAI_AGAIN');
      return { data: { total_remaining_credits: 10 }, status: 200, rate: undefined };
    };
    const path = pathWithBreaker(attempt, clock, 4, { patienceMs: 60_000 });
    const read = path.callAtStart('credits', {}).then((r) => r.data);
    for (let i = 0; i < 10; i += 1) await clock.advance(1_000);
    expect(await read).toEqual({ total_remaining_credits: 10 });
  });

  it('mid-run a lookup meeting it is retried as any network failure (a DNS that failed for a while)', async () => {
    const clock = new ManualClock();
    let sent = 0;
    const attempt: Attempt = async () => {
      sent += 1;
      if (sent < 3) throw dnsFailure('ENOTFOUND');
      return { data: { lead: { name: 'x' } }, status: 200, rate: undefined };
    };
    const path = pathWithBreaker(attempt, clock, 4, { patienceMs: 60_000 });
    const lookup = path.lookup('lookup_email', 'a@x.test');
    for (let i = 0; i < 20; i += 1) await clock.advance(1_000);
    expect(await lookup).toEqual({ lead: { name: 'x' } });
    expect(path.counts.retries).toBe(2);
  });
});

describe('withBreaker', () => {
  it("a lookup held at the gate's end while the run stops was never sent: it fails as one the gate dropped", async () => {
    const { breaker } = breakerOf();
    const stopping = new AbortController();
    const send = withBreaker(
      async () => {
        stopping.abort();
        throw new HeldError();
      },
      breaker,
      stopping.signal,
    );
    await expect(send({ op: 'lookup_email', input: { email: 'a@x.test' } } as never)).rejects.toBeInstanceOf(GateStoppedError);
  });

  it('a lookup held while the API is down goes unsent the moment the run stops looking up (the reserve, a budget): not --patience later', async () => {
    const { breaker, clock, events } = breakerOf(3_000);
    fail(breaker, 8, 8);
    const lookupsStopped = new AbortController();
    let sent = 0;
    const send = withBreaker(
      async () => {
        sent += 1;
        return { data: {}, status: 200, rate: undefined };
      },
      breaker,
      new AbortController().signal,
      false,
      lookupsStopped.signal,
    );
    const held = send({ op: 'lookup_email', input: { email: 'a@x.test' } } as never).then(
      () => 'sent',
      (e: unknown) => e,
    );
    await clock.advance(500);
    lookupsStopped.abort();
    expect(await held).toBeInstanceOf(GateStoppedError);
    expect(sent).toBe(0);
    expect(events.map((e) => e.kind)).toEqual(['unavailable']);
  });

  it("a lookup held at the gate's end waits for its turn again, then goes", async () => {
    const { breaker } = breakerOf();
    let tries = 0;
    const send = withBreaker(
      async () => {
        tries += 1;
        if (tries === 1) throw new HeldError();
        return { data: {}, status: 200, rate: undefined };
      },
      breaker,
      new AbortController().signal,
    );
    await expect(send({ op: 'lookup_email', input: { email: 'a@x.test' } } as never)).resolves.toMatchObject({ status: 200 });
    expect(tries).toBe(2);
  });
});

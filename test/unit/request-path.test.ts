// The request path and its parts on their own: retry, the 429 pause, the gate's pacing
// and pause, the credit reservation and the stop. A fake transport (a scripted attempt function,
// no socket) and a manual clock (no sleep); the gate's engine runs on vitest's fake timers.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BadRequestError, RateLimitedError, ServerError } from '../../src/api/errors.js';
import type { ApiResponse } from '../../src/api/transport.js';
import type { Operation } from '../../src/api/types.js';
import { CreditGuard } from '../../src/lookup/credits.js';
import { GateStoppedError } from '../../src/lookup/rate/rate-gate.js';
import { RequestPath, type Attempt } from '../../src/lookup/request-path/request-path.js';
import { RetryPolicy } from '../../src/lookup/request-path/retry-policy.js';
import { CreditRefusedError, withCredits } from '../../src/lookup/request-path/with-credits.js';
import { withRetry } from '../../src/lookup/request-path/with-retry.js';
import { RequestCounts, type Send } from '../../src/lookup/request-path/request.js';
import { waitAfter429 } from '../../src/lookup/request-path/with-pause.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';

type Answer = unknown | Error;

/** A transport that answers from a script, in order, and records every attempt. */
function fakeApi(...script: Answer[]): { attempt: Attempt; calls: Array<{ op: Operation; input: unknown }> } {
  const calls: Array<{ op: Operation; input: unknown }> = [];
  const attempt: Attempt = async (op, input) => {
    calls.push({ op, input });
    const next = script.length > 1 ? script.shift() : script[0];
    if (next instanceof Error) throw next;
    return { data: next, status: 200, rate: undefined } as ApiResponse<unknown>;
  };
  return { attempt, calls };
}

const FOUND = { lead: { name: 'Jane' } };
const NOT_FOUND = { lead: {} };
const CREDITS = { total_remaining_credits: 100, low_credit_balance_min_threshold: 0, plan_remaining_credits: {} };

function pathOf(attempt: Attempt, options: { retries?: number; maxRateLimited?: number; clock?: ManualClock; windowMs?: number } = {}) {
  const clock = options.clock ?? new ManualClock();
  const stop = new AbortController();
  const halt = new AbortController();
  const retry = new RetryPolicy({
    retries: options.retries ?? 2,
    baseDelayMs: 100,
    maxDelayMs: 1000,
    random: () => 1,
    clock,
    ...(options.maxRateLimited === undefined ? {} : { maxRateLimited: options.maxRateLimited }),
  });
  const path = new RequestPath(attempt, { retry, windowMs: options.windowMs ?? 60_000, noMoreRequests: stop.signal, halt: halt.signal, clock });
  return { path, clock, stop, halt };
}

/** Runs `work` to its end on the manual clock; resolves with its value or its error. */
async function outcome<T>(work: Promise<T>, clock: ManualClock, stepMs = 100): Promise<T | Error> {
  let done: { value: T } | { error: Error } | undefined;
  work.then(
    (value) => (done = { value }),
    (error: Error) => (done = { error }),
  );
  for (let i = 0; i < 10_000 && !done; i += 1) await clock.advance(stepMs);
  if (!done) throw new Error('never settled');
  return 'error' in done ? done.error : done.value;
}

describe('RetryPolicy', () => {
  it('backs off exponentially with full jitter, within the cap', () => {
    const low = new RetryPolicy({ baseDelayMs: 100, maxDelayMs: 1000, random: () => 0 });
    const high = new RetryPolicy({ baseDelayMs: 100, maxDelayMs: 1000, random: () => 1 });
    expect([1, 2, 3, 4, 5].map((n) => low.delayFor(n))).toEqual([50, 100, 200, 400, 500]);
    expect([1, 2, 3, 4, 5].map((n) => high.delayFor(n))).toEqual([100, 200, 400, 800, 1000]);
  });
});

describe('the parts on their own', () => {
  it('with-retry: a retry the stopping gate refuses leaves the call with the failure it had', async () => {
    const counts = new RequestCounts();
    const failures = [new ServerError('503'), new GateStoppedError()];
    const next: Send = async () => {
      throw failures.shift();
    };
    const clock = new ManualClock();
    const send = withRetry(next, new RetryPolicy({ retries: 3, baseDelayMs: 10, clock }), counts, new AbortController().signal);
    expect(await outcome(send({ op: 'credits', input: {} }), clock)).toBeInstanceOf(ServerError);
    expect(counts.retries).toBe(1);
  });

  it('with-credits: a failed call reserves nothing once it is over, and costs nothing', async () => {
    const credits = new CreditGuard({ balance: 8, reserve: 0 });
    const failing = withCredits(async () => {
      throw new ServerError('503');
    }, credits);
    await expect(failing({ op: 'lookup_email', input: { email: 'a@b.c' } })).rejects.toBeInstanceOf(ServerError);
    await expect(failing({ op: 'lookup_email', input: { email: 'a@b.c' } })).rejects.toBeInstanceOf(ServerError);
    // Two worst cases of 4 fit in 8 only if the first was released.
    expect(credits.tryBegin('lookup_email')).toBeDefined();
    expect(credits.tryBegin('lookup_email')).toBeDefined();
    expect(credits.estimatedBalance).toBe(8);
  });
});

describe('RequestPath: retry', () => {
  it('retries a transient failure after its backoff, counting each retry, and the lookups sent', async () => {
    const api = fakeApi(new ServerError('503'), new ServerError('503'), FOUND);
    const { path, clock } = pathOf(api.attempt);
    expect(await outcome(path.lookup('lookup_email', 'jane@acme.com'), clock)).toEqual(FOUND);
    expect(api.calls).toHaveLength(3);
    expect(api.calls[0]).toEqual({ op: 'lookup_email', input: { email: 'jane@acme.com' } });
    expect(clock.waits).toEqual([100, 200]);
    expect(path.counts).toEqual({ requests: 3, retries: 2, rateLimited: 0 });
  });

  it('gives up after `retries` with the last failure, and never retries a permanent one', async () => {
    const failing = fakeApi(new ServerError('503'));
    const a = pathOf(failing.attempt, { retries: 2 });
    expect(await outcome(a.path.lookup('lookup_email', 'x@y.z'), a.clock)).toBeInstanceOf(ServerError);
    expect(failing.calls).toHaveLength(3);

    const refused = fakeApi(new BadRequestError('bad email'));
    const b = pathOf(refused.attempt);
    expect(await outcome(b.path.lookup('lookup_email', 'x@y.z'), b.clock)).toBeInstanceOf(BadRequestError);
    expect(refused.calls).toHaveLength(1);
    expect(b.clock.waits).toEqual([]);
  });

  it('counts lookups as requests, not the account reads', async () => {
    const api = fakeApi(CREDITS);
    const { path, clock } = pathOf(api.attempt);
    await outcome(path.call('credits', {}), clock);
    expect(path.counts.requests).toBe(0);
    expect(api.calls).toEqual([{ op: 'credits', input: {} }]);
  });
});

describe('RequestPath: what comes before a lookup is sent', () => {
  function pathWith(attempt: Attempt, beforeSend: () => Promise<void> | undefined) {
    const clock = new ManualClock();
    const retry = new RetryPolicy({ retries: 2, baseDelayMs: 100, maxDelayMs: 1000, random: () => 1, clock });
    const path = new RequestPath(attempt, {
      retry,
      windowMs: 60_000,
      noMoreRequests: new AbortController().signal,
      halt: new AbortController().signal,
      clock,
      beforeSend,
    });
    return { path, clock };
  }

  it('waits for the commit of the answers already received, then sends', async () => {
    const api = fakeApi(FOUND);
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    const { path } = pathWith(api.attempt, () => committed);
    const answer = path.lookup('lookup_email', 'jane@acme.com');
    await settle();
    expect(api.calls).toHaveLength(0);
    expect(path.counts.requests).toBe(0);
    commit();
    expect(await answer).toEqual(FOUND);
    expect(api.calls).toHaveLength(1);
    expect(path.counts.requests).toBe(1);
  });

  it('sends nothing when that commit fails (a full disk): the call fails with its error, not retried', async () => {
    const api = fakeApi(FOUND);
    const full = new Error('the store is full');
    const { path } = pathWith(api.attempt, () => Promise.reject(full));
    await expect(path.lookup('lookup_email', 'jane@acme.com')).rejects.toBe(full);
    expect(api.calls).toHaveLength(0);
    expect(path.counts).toMatchObject({ requests: 0, retries: 0 });
  });

  it('after an answer, waits for the end of the turn before it asks: the caller keeps that answer first', async () => {
    const api = fakeApi(FOUND);
    let kept = false;
    const askedWhenKept: boolean[] = [];
    const { path } = pathWith(api.attempt, () => {
      askedWhenKept.push(kept);
      return undefined;
    });
    await path.lookup('lookup_email', 'a@acme.com');
    // The answer's slot is free; the caller keeps the answer a few promise hops later, in this turn.
    const second = path.lookup('lookup_email', 'b@acme.com');
    for (let hop = 0; hop < 5; hop += 1) await Promise.resolve();
    kept = true;
    expect(await second).toEqual(FOUND);
    expect(askedWhenKept).toEqual([false, true]);
  });

  it('sends at once when nothing waits to be committed', async () => {
    const api = fakeApi(FOUND);
    const { path } = pathWith(api.attempt, () => undefined);
    expect(await path.lookup('lookup_email', 'jane@acme.com')).toEqual(FOUND);
    expect(api.calls).toHaveLength(1);
  });
});

describe('RequestPath: a 429 before a gate is open', () => {
  it('waits for the hint, then sends the call again', async () => {
    const clock = new ManualClock();
    const api = fakeApi(new RateLimitedError('429', new Date(clock.now() + 2_500)), FOUND);
    const { path } = pathOf(api.attempt, { clock });
    expect(await outcome(path.call('limits', {}), clock)).toMatchObject({ data: FOUND });
    expect(clock.waits).toEqual([2_500]);
    expect(path.counts.rateLimited).toBe(1);
    expect(path.counts.retries).toBe(0);
  });

  it('waits a second without a usable hint, and never longer than one window', () => {
    const now = 1_000_000;
    expect(waitAfter429(new RateLimitedError('429', undefined), now, 60_000)).toBe(1_000);
    expect(waitAfter429(new RateLimitedError('429', new Date(now + 200)), now, 60_000)).toBe(1_000);
    expect(waitAfter429(new RateLimitedError('429', new Date(now + 5_000)), now, 60_000)).toBe(5_000);
    expect(waitAfter429(new RateLimitedError('429', new Date(now + 600_000)), now, 60_000)).toBe(60_000);
  });

  it('does not wait when the policy will not send the call again: the 429 surfaces at once', async () => {
    const api = fakeApi(new RateLimitedError('429', undefined));
    const { path, clock } = pathOf(api.attempt, { maxRateLimited: 0 });
    expect(await outcome(path.call('credits', {}), clock)).toBeInstanceOf(RateLimitedError);
    expect(clock.waits).toEqual([]);
    expect(path.counts.rateLimited).toBe(1);
  });

  it('a halt cuts the wait short, and nothing more is sent once no call may start', async () => {
    const clock = new ManualClock();
    const api = fakeApi(new RateLimitedError('429', new Date(clock.now() + 30_000)), FOUND);
    const { path, halt, stop } = pathOf(api.attempt, { clock });
    const call = path.call('credits', {});
    await settle();
    halt.abort();
    stop.abort();
    expect(await outcome(call, clock)).toBeInstanceOf(RateLimitedError);
    expect(api.calls).toHaveLength(1);
    await expect(path.lookup('lookup_email', 'a@b.c')).rejects.toBeInstanceOf(GateStoppedError);
    expect(api.calls).toHaveLength(1);
  });
});

describe('RequestPath: the probe', () => {
  it('makes one attempt, outside the retries, and counts its 429', async () => {
    const api = fakeApi(new RateLimitedError('429', undefined));
    const { path } = pathOf(api.attempt);
    await expect(path.probe('limits', {})).rejects.toBeInstanceOf(RateLimitedError);
    expect(api.calls).toHaveLength(1);
    expect(path.counts).toEqual({ requests: 0, retries: 0, rateLimited: 1 });
  });
});

describe('RequestPath: credit reservation', () => {
  it('charges a found answer, not a miss', async () => {
    const api = fakeApi(FOUND, NOT_FOUND);
    const { path, clock } = pathOf(api.attempt);
    const credits = new CreditGuard({ balance: 100, reserve: 0 });
    path.guardCredits({ credits, onReserveReached: () => {}, refreshEveryMs: 60_000 });
    await outcome(path.lookup('lookup_email', 'a@b.c'), clock);
    expect(credits.estimatedBalance).toBe(96);
    await outcome(path.lookup('lookup_email', 'd@e.f'), clock);
    expect(credits.estimatedBalance).toBe(96);
    await path.close();
  });

  it('at the reserve: asks for a fresh balance once, then refuses without sending, and says the reserve is reached', async () => {
    const api = fakeApi({ ...CREDITS, total_remaining_credits: 102 });
    const { path, clock } = pathOf(api.attempt);
    const credits = new CreditGuard({ balance: 102, reserve: 100 });
    let reached = 0;
    path.guardCredits({ credits, onReserveReached: () => (reached += 1), refreshEveryMs: 60_000 });
    expect(await outcome(path.lookup('lookup_email', 'a@b.c'), clock)).toBeInstanceOf(CreditRefusedError);
    expect(api.calls.map((c) => c.op)).toEqual(['credits']);
    expect(reached).toBe(1);
    expect(credits.exhausted).toBe(true);
    await path.close();
  });

  it('refused by the estimate, but the fresh balance pays for it above the reserve (credits added): the call is sent', async () => {
    const api = fakeApi({ ...CREDITS, total_remaining_credits: 200 }, FOUND);
    const { path, clock } = pathOf(api.attempt);
    const credits = new CreditGuard({ balance: 102, reserve: 100 });
    let reached = 0;
    path.guardCredits({ credits, onReserveReached: () => (reached += 1), refreshEveryMs: 60_000 });
    expect(await outcome(path.lookup('lookup_email', 'a@b.c'), clock)).toEqual(FOUND);
    expect(api.calls.map((c) => c.op)).toEqual(['credits', 'lookup_email']);
    expect(reached).toBe(0);
    await path.close();
  });
});

describe('RequestPath: the rate gate', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('paces every call once open, and a 429 pauses the gate for every call until the server says', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const times: number[] = [];
    let refuse = true;
    const attempt: Attempt = async () => {
      times.push(Date.now());
      if (refuse) {
        refuse = false;
        throw new RateLimitedError('429', new Date(Date.now() + 1_000));
      }
      return { data: FOUND, status: 200, rate: undefined };
    };
    const stop = new AbortController();
    const path = new RequestPath(attempt, { retry: new RetryPolicy({ retries: 0 }), windowMs: 10_000, noMoreRequests: stop.signal, halt: stop.signal });
    const gate = path.openGate({ rpm: 100, windowMs: 10_000, edgeMarginMs: 5 });
    const calls = Promise.all([1, 2, 3].map((i) => path.lookup('lookup_email', `${i}@x.test`)));
    for (let i = 0; i < 1_000 && times.length < 4; i += 1) await vi.advanceTimersByTimeAsync(10);
    await calls;
    expect(gate.stats.pauses).toBe(1);
    expect(path.counts.rateLimited).toBe(1);
    // The refused call and the two others all wait for the pause's end; then one per 100 ms, the
    // pace (windowMs / rpm), within the engine's rounding of a millisecond or so.
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(1_000);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(95);
    expect(times[3]! - times[2]!).toBeGreaterThanOrEqual(95);
    stop.abort();
    await path.close();
  });
});

describe('RequestPath: built whole, its slots filled later', () => {
  it('a credit reserve guarded after the first lookup charges the next ones, on the same path', async () => {
    const api = fakeApi(FOUND);
    const { path, clock } = pathOf(api.attempt);
    const credits = new CreditGuard({ balance: 100, reserve: 0 });
    await outcome(path.lookup('lookup_email', 'a@b.c'), clock);
    expect(credits.estimatedBalance).toBe(100);
    path.guardCredits({ credits, onReserveReached: () => {}, refreshEveryMs: 60_000 });
    await outcome(path.lookup('lookup_email', 'd@e.f'), clock);
    expect(credits.estimatedBalance).toBe(96);
    expect(path.counts).toEqual({ requests: 2, retries: 0, rateLimited: 0 });
    await path.close();
  });

  it("its reading: the path's window and no concurrency before a gate; the gate's once it is open", async () => {
    const stop = new AbortController();
    const path = new RequestPath(fakeApi(FOUND).attempt, {
      retry: new RetryPolicy({ retries: 0 }),
      windowMs: 60_000,
      noMoreRequests: stop.signal,
      halt: stop.signal,
    });
    expect(path.reading()).toMatchObject({ requests: 0, windowMs: 60_000, concurrency: 0, rateLimitedUntil: undefined, apiUnavailableMs: 0 });
    path.openGate({ rpm: 100, windowMs: 10_000, maxConcurrency: 4 });
    const reading = path.reading();
    expect(reading.windowMs).toBe(10_000);
    expect(reading.concurrency).toBeGreaterThan(0);
    expect(reading.concurrency).toBeLessThanOrEqual(4);
    stop.abort();
    await path.close();
  });
});

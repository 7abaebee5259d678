// A circuit breaker on a manual clock, and the states the breaker tests start from
// (test/unit/breaker.test.ts, test/unit/breaker-turns.test.ts).
import { expect } from 'vitest';
import { ServerError } from '../../src/api/errors.js';
import { CircuitBreaker, type Availability } from '../../src/lookup/request-path/breaker.js';
import { ManualClock } from './manual-clock.js';

/** An outage as the API gives one: a 503. */
export const outage = (): ServerError => new ServerError('503', { status: 503 });

/** A breaker with this patience, its manual clock, and the availability events it told. */
export function breakerOf(patienceMs = 60_000): { breaker: CircuitBreaker; clock: ManualClock; events: Availability[] } {
  const clock = new ManualClock();
  const events: Availability[] = [];
  const breaker = new CircuitBreaker({ clock, patienceMs, onChange: (e) => events.push(e) });
  return { breaker, clock, events };
}

/** `n` failures of `keys` different keys, each admitted while closed. */
export function fail(breaker: CircuitBreaker, n: number, keys: number, error: unknown = outage()): Array<'retry' | 'hold'> {
  return Array.from({ length: n }, (_, i) => breaker.failed('closed', error, `k${i % keys}`));
}

/**
 * A breaker with a patience of 3 s whose probes at 1 s and 2.5 s failed: the next would come at
 * 4.75 s, past the patience, so the third held lookup goes as the last probe at 3 s.
 */
export async function lastProbeAtPatienceEnd(): Promise<{ breaker: CircuitBreaker; clock: ManualClock; events: Availability[] }> {
  const { breaker, clock, events } = breakerOf(3_000);
  fail(breaker, 8, 8);
  const calls = [breaker.admit(), breaker.admit(), breaker.admit()];
  await clock.advance(1_000);
  await expect(calls[0]).resolves.toBe('probe');
  breaker.failed('probe', outage(), 'k0');
  await clock.advance(1_500);
  await expect(calls[1]).resolves.toBe('probe');
  breaker.failed('probe', outage(), 'k1');
  await clock.advance(500);
  await expect(calls[2]).resolves.toBe('probe');
  return { breaker, clock, events };
}

/** A breaker opened by eight failures of eight keys whose first probe (at 1 s) is out, nobody else held. */
export async function probeOut(): Promise<{ breaker: CircuitBreaker; clock: ManualClock; events: Availability[] }> {
  const opened = breakerOf();
  fail(opened.breaker, 8, 8);
  const probe = opened.breaker.admit();
  await opened.clock.advance(1_000);
  await expect(probe).resolves.toBe('probe');
  return opened;
}

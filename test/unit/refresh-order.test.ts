// The order of a night's refreshes (run/refresh-order.ts): the oldest found answers the credits pay
// for, after the keys with no answer; and the look-up step keeping the younger ones as stored. In
// process: no socket, a store in memory, a fixed clock.
import { describe, expect, it } from 'vitest';
import { CreditGuard } from '../../src/lookup/credits.js';
import { Lookups } from '../../src/lookup/lookups.js';
import { lookupsFor, OldestFound } from '../../src/run/refresh-order.js';
import { RunStop } from '../../src/run/run-stop.js';
import { ResultStore } from '../../src/store/result-store.js';

describe('OldestFound', () => {
  it('keeps the oldest it can pay for, whatever order they come in; the cutoff is the youngest kept', () => {
    const oldest = new OldestFound(3);
    for (const [key, at] of [
      ['a', 50],
      ['b', 10],
      ['c', 40],
      ['d', 20],
      ['e', 30],
      ['f', 5],
    ] as const)
      oldest.offer(key, at);
    expect(oldest.cutoff()).toBe(20);
  });

  it('every answer fits: no cutoff (nothing waits), exactly at the capacity too', () => {
    const oldest = new OldestFound(3);
    for (const [key, at] of [
      ['a', 50],
      ['b', 10],
      ['c', 40],
    ] as const)
      oldest.offer(key, at);
    expect(oldest.cutoff()).toBeUndefined();
    const fewer = new OldestFound(3);
    fewer.offer('a', 1);
    expect(fewer.cutoff()).toBeUndefined();
    expect(new OldestFound(0).cutoff()).toBeUndefined();
  });

  it('one more than the capacity: the youngest waits', () => {
    const oldest = new OldestFound(3);
    for (const [key, at] of [
      ['a', 50],
      ['b', 10],
      ['c', 40],
      ['d', 60],
    ] as const)
      oldest.offer(key, at);
    expect(oldest.cutoff()).toBe(50);
  });

  it('a key met again counts once', () => {
    const oldest = new OldestFound(2);
    for (const [key, at] of [
      ['a', 10],
      ['a', 10],
      ['b', 20],
      ['b', 20],
    ] as const)
      oldest.offer(key, at);
    expect(oldest.cutoff()).toBeUndefined();
  });

  it('new keys come first: they take their lookups before any refresh; all of them: no refresh at all', () => {
    const oldest = new OldestFound(4);
    for (const [key, at] of [
      ['a', 50],
      ['b', 10],
      ['c', 40],
      ['d', 20],
    ] as const)
      oldest.offer(key, at);
    oldest.newKey('n1');
    oldest.newKey('n1');
    expect(oldest.full).toBe(false);
    oldest.newKey('n2');
    // Four lookups: two new keys, then the two oldest (10, 20).
    expect(oldest.cutoff()).toBe(20);
    oldest.newKey('n3');
    oldest.newKey('n4');
    expect(oldest.full).toBe(true);
    expect(oldest.cutoff()).toBe(-Infinity);
  });

  it('the lookups a budget pays for: 4 credits each, the last with room for a hold of 8', () => {
    expect(lookupsFor(16, 'lookup_email')).toBe(3);
    expect(lookupsFor(20, 'lookup_email')).toBe(4);
    expect(lookupsFor(7, 'lookup_email')).toBe(0);
    expect(lookupsFor(8, 'lookup_email')).toBe(1);
    expect(lookupsFor(-5, 'lookup_email')).toBe(0);
  });
});

describe('the look-up step with a cutoff', () => {
  const NOW = Date.parse('2026-06-10T12:00:00Z');
  const DAY = 86_400_000;
  const SERVICE = 'https://api.test/v2';

  function lookups(refreshBefore: number) {
    const store = ResultStore.open({ path: ':memory:', now: () => NOW });
    store.put(SERVICE, 'lookup_email', 'old@acme.test', { found: true, data: { lead: { name: 'Old' } }, fetchedAt: NOW - 60 * DAY }, 'run-1');
    store.put(SERVICE, 'lookup_email', 'young@acme.test', { found: true, data: { lead: { name: 'Young' } }, fetchedAt: NOW - 40 * DAY }, 'run-1');
    store.put(SERVICE, 'lookup_email', 'miss@acme.test', { found: false, data: { lead: {} }, fetchedAt: NOW - 40 * DAY }, 'run-1');
    const sent: string[] = [];
    const stop = new RunStop();
    const l = new Lookups({
      store,
      service: SERVICE,
      runId: 'run-2',
      freshSince: NOW - 30 * DAY,
      refresh: false,
      send: async (_op, key) => {
        sent.push(key);
        return { lead: { name: 'Fresh' } };
      },
      credits: new CreditGuard({ balance: 100, reserve: 0 }),
      stop,
      refreshBefore,
    });
    return { l, sent, stop };
  }

  it('an answer older than the cutoff is looked up again; a younger found one is kept as stored (stale, budget), without a request; a miss and a new key are looked up', async () => {
    const { l, sent, stop } = lookups(NOW - 50 * DAY);
    expect(await l.resolve('lookup_email', 'old@acme.test')).toMatchObject({ kind: 'found', billing: 'charged' });
    // The library's words (the command line's are --budget and --max-age).
    const kept = await l.resolve('lookup_email', 'young@acme.test');
    expect(kept).toMatchObject({ kind: 'found', billing: 'stale', data: { lead: { name: 'Young' } }, stale: { kind: 'skipped', code: 'budget' } });
    expect((kept as { stale: { message: string } }).stale.message).toMatch(
      /^not looked up: budget cannot refresh every answer older than maxAge in this run, and older ones went first; written with the stored answer of 2026-05-01 \(stale\)$/,
    );
    expect(await l.resolve('lookup_email', 'miss@acme.test')).toMatchObject({ billing: 'charged' });
    expect(await l.resolve('lookup_email', 'new@acme.test')).toMatchObject({ billing: 'charged' });
    expect(sent).toEqual(['old@acme.test', 'miss@acme.test', 'new@acme.test']);
    // A row kept waiting is one the budget turned away: the run stopped early for it (exit 3).
    expect(stop.stoppedBy).toBe('budget');
  });

  it('at the cutoff itself: looked up', async () => {
    const { l, sent } = lookups(NOW - 40 * DAY);
    await l.resolve('lookup_email', 'young@acme.test');
    expect(sent).toEqual(['young@acme.test']);
  });
});

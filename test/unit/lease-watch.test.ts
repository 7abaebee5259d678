// Whether another run that shares the store is gone (store/lease-watch.ts): its process is gone on
// this host, or its deadline has not changed for a whole lease as this run's own clock measures it;
// the deadline's value is never compared with this run's time. The clock is the test's.
import { describe, expect, it } from 'vitest';
import { LeaseWatch } from '../../src/store/lease-watch.js';

const LEASE = 30_000;

function watch(alive: (pid: number) => boolean = () => true) {
  const clock = { elapsed: 0 };
  return { clock, watch: new LeaseWatch({ host: 'here', leaseMs: LEASE, elapsed: () => clock.elapsed, alive }) };
}

describe('a lease watched by this run’s own clock', () => {
  it('a holder of this host whose process is gone is gone at once; on another host its pid means nothing', () => {
    const { watch: w } = watch((pid) => pid !== 666);
    expect(w.gone({ id: 'a', pid: 666, host: 'here', mark: 1 })).toBe(true);
    expect(w.gone({ id: 'b', pid: 666, host: 'there', mark: 1 })).toBe(false);
    expect(w.gone({ id: 'c', pid: 7, host: 'here', mark: 1 })).toBe(false);
  });

  it('is gone once its deadline stayed the same for a whole lease, counted from when this run first saw it', () => {
    const { clock, watch: w } = watch();
    // A deadline far in the past by any clock: it is only compared with itself.
    const holder = { id: 'a', pid: 7, host: 'there', mark: 12 };
    expect(w.leftOf(holder)).toBe(LEASE);
    clock.elapsed += LEASE - 1;
    expect(w.gone(holder)).toBe(false);
    expect(w.leftOf(holder)).toBe(1);
    clock.elapsed += 1;
    expect(w.gone(holder)).toBe(true);
  });

  it('a changed deadline is a renewal, whichever way it moved (a clock set back renews too)', () => {
    const { clock, watch: w } = watch();
    w.gone({ id: 'a', pid: 7, host: 'there', mark: 5_000 });
    clock.elapsed += LEASE - 1;
    expect(w.gone({ id: 'a', pid: 7, host: 'there', mark: 4_000 })).toBe(false);
    clock.elapsed += LEASE - 1;
    expect(w.gone({ id: 'a', pid: 7, host: 'there', mark: 4_000 })).toBe(false);
    clock.elapsed += 1;
    expect(w.gone({ id: 'a', pid: 7, host: 'there', mark: 4_000 })).toBe(true);
  });

  it('forgets a holder released or taken over: seen again, its count starts anew', () => {
    const { clock, watch: w } = watch();
    w.gone({ id: 'a', pid: 7, host: 'there', mark: 1 });
    clock.elapsed += LEASE;
    w.forget('a');
    expect(w.gone({ id: 'a', pid: 7, host: 'there', mark: 1 })).toBe(false);
  });

  it('keeps its memory flat: holders not looked at for a lease are let go once a thousand are watched (their count starts anew, later, never sooner)', () => {
    const { clock, watch: w } = watch();
    const old = { id: 'old', pid: 7, host: 'there', mark: 1 };
    w.gone(old);
    clock.elapsed += LEASE + 1;
    for (let i = 0; i < 1_000; i++) w.gone({ id: `k${i}`, pid: 7, host: 'there', mark: 1 });
    expect(w.gone(old)).toBe(false);
    // One looked at within the lease is kept, and lapses on time.
    const kept = { id: 'k0', pid: 7, host: 'there', mark: 1 };
    clock.elapsed += LEASE;
    expect(w.gone(kept)).toBe(true);
  });

  it('lets none go while a thousand at most are watched', () => {
    const { clock, watch: w } = watch();
    const old = { id: 'old', pid: 7, host: 'there', mark: 1 };
    w.gone(old);
    clock.elapsed += LEASE + 1;
    // 1,000 watched with `old`: it is kept, and lapsed (unchanged for over a lease).
    for (let i = 0; i < 999; i++) w.gone({ id: `k${i}`, pid: 7, host: 'there', mark: 1 });
    expect(w.gone(old)).toBe(true);
  });

  it('a holder looked at exactly a lease ago is kept when the others are let go; after a letting go, the next waits for twice as many as were kept', () => {
    const { clock, watch: w } = watch();
    const edge = { id: 'edge', pid: 7, host: 'there', mark: 1 };
    w.gone(edge);
    clock.elapsed += LEASE;
    // The 1,001st holder lets go of those not looked at for more than a lease: `edge` was looked at a lease ago exactly.
    for (let i = 0; i < 1_000; i++) w.gone({ id: `k${i}`, pid: 7, host: 'there', mark: 1 });
    expect(w.gone(edge)).toBe(true);
    // 1,001 kept: none is let go before 2,002 are watched.
    const stale = { id: 'stale', pid: 7, host: 'there', mark: 1 };
    w.gone(stale);
    clock.elapsed += LEASE + 1;
    for (let i = 1_000; i < 1_999; i++) w.gone({ id: `k${i}`, pid: 7, host: 'there', mark: 1 });
    expect(w.gone(stale)).toBe(true);
  });

  it('a holder first seen lets none go while few are watched, however long the others were not looked at', () => {
    const { clock, watch: w } = watch();
    const old = { id: 'old', pid: 7, host: 'there', mark: 1 };
    w.gone(old);
    clock.elapsed += LEASE + 1;
    w.gone({ id: 'new', pid: 7, host: 'there', mark: 1 });
    expect(w.gone(old)).toBe(true);
  });
});

// The two places a run's ledger lives (lookup/spend-ledgers.ts; docs/cli-contract.md, "Spending over
// days and months"): the store's file, where a run that ends commits its settled calls before it
// lets go of its holds (a call never settled is counted as spent at its worst case), and Redis
// with --redis, where every charge is also recorded in this run's own store, a Redis that failed
// never loses an answer, and a lost Redis leaves the store to say where a budget stands.
import { describe, expect, it } from 'vitest';
import type { Coordinator } from '../../src/cluster/coordinator.js';
import type { RedisLink } from '../../src/cluster/redis-link.js';
import { SharedSpend } from '../../src/cluster/shared-spend.js';
import { periodAt } from '../../src/core/budget-periods.js';
import { redisLedger, storeLedger } from '../../src/lookup/spend-ledgers.js';
import { ResultStore } from '../../src/store/result-store.js';

const AT = Date.parse('2026-03-14T10:00:00Z');
const charge = (credits: number, op = 'lookup_email', service = 'svc') => ({ at: AT, service, op, credits, runId: 'run-1' });

function days(store: ResultStore, service = 'svc') {
  store.flush();
  return store.spend().ledger.days(3, service);
}

describe("the store's ledger", () => {
  it('a run that ends commits its settled calls first: only what was never settled is counted as spent, at its worst case', async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const ledger = storeLedger(store, 'run-1', 60_000, 'svc');
    const settled = (await ledger.reserve('lookup_email', 8, [], AT)) as { seq: number };
    await ledger.reserve('lookup_email', 8, [], AT);
    // Settled, not committed yet: close() commits it before it lets the holds go.
    await ledger.settle({ seq: settled.seq, at: AT, op: 'lookup_email' }, charge(6));
    ledger.close();
    expect(days(store)).toEqual([{ period: '2026-03-14', credits: 6 + 8, calls: 2, lapsed: 8 }]);
    expect(store.spend().ledger.heldNow('svc')).toBe(0);
    store.close();
  });

  it('a run that never held anything closes without touching the store', () => {
    const store = ResultStore.open({ path: ':memory:' });
    storeLedger(store, 'run-1', 60_000, 'svc').close();
    expect(days(store)).toEqual([]);
    store.close();
  });

  it('reads the standing and the dearest call of its own service only', async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const mine = storeLedger(store, 'run-1', 60_000, 'svc');
    const other = storeLedger(store, 'run-2', 60_000, 'other');
    await mine.settle(undefined, charge(6));
    await other.settle(undefined, charge(40, 'lookup_email', 'other'));
    store.flush();
    expect(await mine.standing(periodAt('day', AT))).toEqual({ spent: 6, held: 0 });
    expect(await mine.mostCharged()).toEqual(new Map([['lookup_email', 6]]));
    store.close();
  });

  it('a call settled after its store was closed (a second Ctrl-C) is let go without an error', async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const ledger = storeLedger(store, 'run-1', 60_000, 'svc');
    store.close();
    expect(() => ledger.settle(undefined, charge(6))).not.toThrow();
  });
});

/** Redis's side, recorded; `fail` makes its settlement fail as a lost Redis does. */
function redisSide(options: { most?: Map<string, number>; fail?: boolean; lost?: boolean } = {}) {
  const said: unknown[][] = [];
  const spend = {
    reserve: async (...args: unknown[]) => (said.push(['reserve', ...args]), { seq: 7 }),
    settle: async (...args: unknown[]) => {
      said.push(['settle', ...args]);
      if (options.fail) throw new Error('redis gone');
    },
    standing: async () => ({ spent: 99, held: 1 }),
    mostCharged: async () => options.most ?? new Map<string, number>(),
  } as unknown as SharedSpend;
  return { coordinator: { spend, lost: options.lost ? new Error('lost') : undefined } as unknown as Coordinator, said };
}

describe("Redis's ledger", () => {
  it('holds in Redis, as asked', async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const { coordinator, said } = redisSide();
    expect(await redisLedger(coordinator, store, 'svc').reserve('mx', 4, [{ credits: 10, per: 'day' }], AT)).toEqual({ seq: 7 });
    expect(said).toEqual([['reserve', 'mx', 4, [{ credits: 10, per: 'day' }], AT]]);
    store.close();
  });

  it("records a charge in this run's store too, and settles the hold in Redis; a miss only settles", async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const { coordinator, said } = redisSide();
    const ledger = redisLedger(coordinator, store, 'svc');
    await ledger.settle({ seq: 3, at: AT, op: 'lookup_email' }, charge(6));
    await ledger.settle({ seq: 4, at: AT, op: 'lookup_email' }, undefined);
    await ledger.settle(undefined, undefined);
    expect(days(store)).toEqual([{ period: '2026-03-14', credits: 6, calls: 1, lapsed: 0 }]);
    expect(said).toEqual([
      ['settle', 3, charge(6)],
      ['settle', 4, undefined],
      ['settle', undefined, undefined],
    ]);
    store.close();
  });

  it('a Redis that fails at settlement loses nothing: the charge is in the store, and no error', async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const ledger = redisLedger(redisSide({ fail: true }).coordinator, store, 'svc');
    await expect(ledger.settle({ seq: 3, at: AT, op: 'lookup_email' }, charge(6))).resolves.toBeUndefined();
    expect(days(store)).toMatchObject([{ credits: 6 }]);
    store.close();
  });

  it("where a budget stands: Redis's figures while it is there, the store's once it is lost", async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const ledger = redisLedger(redisSide({ lost: true }).coordinator, store, 'svc');
    await ledger.settle(undefined, charge(6));
    store.flush();
    expect(await ledger.standing(periodAt('day', AT))).toEqual({ spent: 6, held: 0 });
    expect(await redisLedger(redisSide().coordinator, store, 'svc').standing(periodAt('day', AT))).toEqual({ spent: 99, held: 1 });
    store.close();
  });

  it("the dearest call: the larger of the store's and Redis's, per operation", async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const local = storeLedger(store, 'run-1', 60_000, 'svc');
    await local.settle(undefined, charge(10));
    await local.settle(undefined, charge(3, 'whois'));
    store.flush();
    const most = new Map([
      ['lookup_email', 8],
      ['whois', 5],
      ['mx', 4],
    ]);
    expect(await redisLedger(redisSide({ most }).coordinator, store, 'svc').mostCharged()).toEqual(
      new Map([
        ['lookup_email', 10],
        ['whois', 5],
        ['mx', 4],
      ]),
    );
    store.close();
  });
});

describe("Redis's refusal, as its script answers it", () => {
  /** A worker whose Redis answers a reservation with `reply` (the script's array: budget, spent, held, ms to the soonest lapse). */
  const answering = (reply: number[]) => {
    const link = { call: (send: () => Promise<unknown>) => send(), client: { eval: async () => reply } } as unknown as RedisLink;
    return new SharedSpend(link, 'cluster', 'worker');
  };

  it('says when the soonest other holder lapses, even when that is now (0 ms); -1 means no other holder, and no time is said', async () => {
    const budget = { credits: 16, per: 'day' } as const;
    const now = await answering([1, 5, 9, 0]).reserve('lookup_email', 9, [budget], AT);
    expect(now).toEqual({ refused: budget, period: periodAt('day', AT), spent: 5, held: 9, lapseInMs: 0 });
    expect(await answering([1, 5, 9, 1500]).reserve('lookup_email', 9, [budget], AT)).toMatchObject({ lapseInMs: 1500 });
    expect(await answering([1, 5, 9, -1]).reserve('lookup_email', 9, [budget], AT)).not.toHaveProperty('lapseInMs');
    expect(await answering([0]).reserve('lookup_email', 9, [budget], AT)).toEqual({ seq: 1 });
  });
});

// The ledger shared by every worker on one Redis (--redis; docs/cli-contract.md, "Spending over days
// and months"): a call holds its worst case against the day and month budgets atomically, a budget
// of 8 takes a worst case of 8 and refuses 9, another worker's holds count, a gone worker's holds
// count as spent at what they held (and its late charge replaces that estimate), and the dearest
// call is remembered; clusters on one Redis keep their spend, holds and records apart. A real redis-server on 127.0.0.1 (skipped, with its reason, where none is installed).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SharedSpend } from '../../src/cluster/shared-spend.js';
import { RedisLink } from '../../src/cluster/redis-link.js';
import { periodAt, type PeriodLimit } from '../../src/core/budget-periods.js';
import { REDIS_MISSING, startRedis, type RedisServer } from '../helpers/redis.js';

let redis: RedisServer | undefined;
const links: RedisLink[] = [];
beforeAll(async () => {
  if (REDIS_MISSING === undefined) redis = await startRedis();
}, 30_000);
afterAll(async () => {
  for (const link of links) await link.close();
  await redis?.stop();
});
beforeEach((context) => {
  // Skipped where no redis-server is installed (REDIS_MISSING says so, and the skip reporter lists it).
  if (REDIS_MISSING !== undefined) context.skip(REDIS_MISSING);
});

const AT = Date.parse('2026-03-14T10:00:00Z');
const day = (credits: number): PeriodLimit => ({ credits, per: 'day' });
const month = (credits: number): PeriodLimit => ({ credits, per: 'month' });
const charge = (credits: number, op = 'lookup_email', at = AT) => ({ at, service: 'svc', op, credits, runId: 'run' });

/** Workers of one fresh cluster (its own keys), each with its own link; `aliveMs` how long a silent one stays alive. */
async function cluster(): Promise<(aliveMs?: number) => Promise<SharedSpend>> {
  const id = `test-${randomUUID()}`;
  return async (aliveMs?: number) => {
    const link = await RedisLink.connect(redis!.url);
    links.push(link);
    return new SharedSpend(link, id, randomUUID(), aliveMs);
  };
}

describe('the shared ledger, at a budget’s edge', () => {
  it('a budget of 8/day takes a worst case of 8 and refuses 9, naming the budget, its period and what it spent', async () => {
    const worker = await cluster();
    const a = await worker();
    expect(await a.reserve('lookup_email', 9, [day(8)], AT)).toEqual({ refused: day(8), period: periodAt('day', AT), spent: 0, held: 0 });
    expect(await a.reserve('lookup_email', 8, [day(8)], AT)).toEqual({ seq: 2 });
    expect(await a.standing(periodAt('day', AT))).toEqual({ spent: 0, held: 8 });
  });

  it('what was charged and what is held both count; a settlement releases the hold and records the charge in the day and the month', async () => {
    const worker = await cluster();
    const a = await worker();
    const first = (await a.reserve('lookup_email', 8, [day(30)], AT)) as { seq: number };
    await a.settle(first.seq, charge(6));
    expect(await a.standing(periodAt('day', AT))).toEqual({ spent: 6, held: 0 });
    expect(await a.standing(periodAt('month', AT))).toEqual({ spent: 6, held: 0 });
    // Another day of the month: its own day, the same month.
    expect(await a.standing(periodAt('day', AT + 86_400_000))).toEqual({ spent: 0, held: 0 });
    const second = (await a.reserve('lookup_email', 8, [day(30)], AT)) as { seq: number };
    expect(second.seq).toBe(2);
    // 6 spent + 8 held + 16 asked = 30: fits exactly; 17 would not.
    expect(await a.reserve('mx', 17, [day(30)], AT)).toMatchObject({ refused: day(30), spent: 6, held: 8 });
    expect(await a.reserve('mx', 16, [day(30)], AT)).toMatchObject({ seq: 4 });
  });

  it('a miss settles without a charge: nothing spent, nothing held', async () => {
    const worker = await cluster();
    const a = await worker();
    const held = (await a.reserve('lookup_email', 8, [day(8)], AT)) as { seq: number };
    await a.settle(held.seq, undefined);
    expect(await a.standing(periodAt('day', AT))).toEqual({ spent: 0, held: 0 });
    expect(await a.mostCharged()).toEqual(new Map());
  });

  it('the last call that fits holds all the budget has left', async () => {
    const worker = await cluster();
    const a = await worker();
    await a.reserve('lookup_email', 8, [day(15)], AT);
    expect(await a.standing(periodAt('day', AT))).toEqual({ spent: 0, held: 15 });
    const even = await (await cluster())();
    await even.reserve('lookup_email', 8, [day(16)], AT);
    expect(await even.standing(periodAt('day', AT))).toEqual({ spent: 0, held: 8 });
  });

  it('the tightest budget refuses and is named: a month nearly spent before a day', async () => {
    const worker = await cluster();
    const a = await worker();
    const earlier = AT - 5 * 86_400_000;
    await a.settle(undefined, charge(95, 'lookup_url', earlier));
    expect(await a.reserve('lookup_email', 8, [day(100), month(100)], AT)).toEqual({ refused: month(100), period: periodAt('month', AT), spent: 95, held: 0 });
    expect(await a.reserve('lookup_email', 8, [month(1000), day(7)], AT)).toMatchObject({ refused: day(7), spent: 0 });
  });

  it('with no budget, a call is held all the same (it counts for every budget read), at its worst case', async () => {
    const worker = await cluster();
    const a = await worker();
    expect(await a.reserve('lookup_email', 8, [], AT)).toEqual({ seq: 1 });
    expect(await a.standing(periodAt('day', AT))).toEqual({ spent: 0, held: 8 });
    // A hold made on another day is not this day's.
    expect(await a.standing(periodAt('day', AT - 86_400_000))).toEqual({ spent: 0, held: 0 });
  });
});

describe('several workers', () => {
  it("another worker's holds count against the budget, and the refusal says when they lapse if that worker is gone", async () => {
    const worker = await cluster();
    const a = await worker(60_000);
    const b = await worker(60_000);
    await a.reserve('lookup_email', 8, [day(16)], AT);
    const refused = await b.reserve('lookup_email', 9, [day(16)], AT);
    expect(refused).toMatchObject({ refused: day(16), spent: 0, held: 8 });
    const lapse = (refused as { lapseInMs?: number }).lapseInMs;
    expect(lapse).toBeGreaterThan(50_000);
    expect(lapse).toBeLessThanOrEqual(60_000);
    // Its own holds alone: nothing to lapse, so no time is said.
    const alone = await (await cluster())(60_000);
    await alone.reserve('lookup_email', 8, [day(16)], AT);
    expect(await alone.reserve('lookup_email', 9, [day(16)], AT)).not.toHaveProperty('lapseInMs');
  });

  it("a gone worker's holds count as spent at what they held; its late charge replaces the estimate", async () => {
    const worker = await cluster();
    const gone = await worker(150);
    const b = await worker(60_000);
    const held = (await gone.reserve('lookup_email', 8, [day(100)], AT)) as { seq: number };
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await b.standing(periodAt('day', AT))).toEqual({ spent: 8, held: 0 });
    expect(await b.standing(periodAt('month', AT))).toEqual({ spent: 8, held: 0 });
    // Only frozen: it settles, and its real charge replaces the 8 counted.
    await gone.settle(held.seq, charge(6));
    expect(await b.standing(periodAt('day', AT))).toEqual({ spent: 6, held: 0 });
    expect(await b.standing(periodAt('month', AT))).toEqual({ spent: 6, held: 0 });
  });

  it('a worker alive keeps its holds held, not spent', async () => {
    const worker = await cluster();
    const a = await worker(60_000);
    const b = await worker(60_000);
    await a.reserve('lookup_email', 8, [day(100)], AT);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await b.standing(periodAt('day', AT))).toEqual({ spent: 0, held: 8 });
  });
});

describe('the dearest call remembered', () => {
  it('per operation: raised by a dearer charge, never lowered', async () => {
    const worker = await cluster();
    const a = await worker();
    await a.settle(undefined, charge(12));
    await a.settle(undefined, charge(6));
    await a.settle(undefined, charge(4, 'mx'));
    expect(await a.mostCharged()).toEqual(
      new Map([
        ['lookup_email', 12],
        ['mx', 4],
      ]),
    );
  });
});

describe('clusters on one Redis', () => {
  /** A worker of cluster `clusterId` with a worker id of its own choosing (two clusters may draw the same). */
  async function workerOf(clusterId: string, workerId: string): Promise<{ spend: SharedSpend; link: RedisLink }> {
    const link = await RedisLink.connect(redis!.url);
    links.push(link);
    return { spend: new SharedSpend(link, clusterId, workerId), link };
  }

  it('keep their spend and their holds apart, even with workers of the same id', async () => {
    const [one, two] = [`test-${randomUUID()}`, `test-${randomUUID()}`];
    const a = (await workerOf(one, 'worker-1')).spend;
    const b = (await workerOf(two, 'worker-1')).spend;
    const c = (await workerOf(two, 'worker-2')).spend;
    const charged = (await a.reserve('lookup_email', 8, [month(100)], AT)) as { seq: number };
    await a.settle(charged.seq, charge(5));
    await a.reserve('lookup_email', 8, [month(100)], AT);
    // The other cluster's scripts sweep their own workers only (the first cluster's live worker is
    // not taken for one of theirs gone), and hold their own holds.
    await c.reserve('mx', 1, [month(100)], AT);
    expect(await a.standing(periodAt('month', AT))).toEqual({ spent: 5, held: 8 });
    await b.reserve('mx', 2, [month(100)], AT);
    expect(await c.standing(periodAt('month', AT))).toEqual({ spent: 0, held: 3 });
    expect(await a.standing(periodAt('month', AT))).toEqual({ spent: 5, held: 8 });
    expect(await a.standing(periodAt('day', AT))).toEqual({ spent: 5, held: 8 });
  });

  it('write no key outside their own name: a worker of one cluster is never taken for the same worker id of another', async () => {
    const id = `test-${randomUUID()}`;
    const { spend, link } = await workerOf(id, 'worker-same');
    const held = (await spend.reserve('lookup_email', 8, [day(100)], AT)) as { seq: number };
    await spend.settle(held.seq, charge(5));
    await spend.reserve('lookup_email', 8, [day(100)], AT);
    await spend.mostCharged();
    const keys = await link.client.keys('*');
    expect(keys.filter((key) => key.includes('worker-same') || key.startsWith(id)).length).toBeGreaterThanOrEqual(7);
    expect(keys.filter((key) => !key.startsWith('test-'))).toEqual([]);
  });

  it("keep each charged call's record under their own name, in the day it was charged", async () => {
    const id = `test-${randomUUID()}`;
    const { spend, link } = await workerOf(id, 'worker-1');
    const held = (await spend.reserve('lookup_email', 8, [day(100)], AT)) as { seq: number };
    await spend.settle(held.seq, charge(5));
    const records = await link.client.lrange(`${id}:spend:log:2026-03-14`, 0, -1);
    expect(records.map((r) => JSON.parse(r))).toEqual([{ at: '2026-03-14T10:00:00.000Z', op: 'lookup_email', credits: 5, run: 'run' }]);
    expect(await link.client.pttl(`${id}:spend:log:2026-03-14`)).toBeGreaterThan(399 * 86_400_000);
  });
});

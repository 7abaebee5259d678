// --budget N, N/day and N/month (docs/cli-contract.md, "Spending over days and months"): the rule
// that reads them, the UTC periods, and the budgets over a store's ledger on an injected clock:
// a charge is recorded, no call passes a budget, and a new day or month may spend again.
import { describe, expect, it } from 'vitest';
import { periodAt, resetText } from '../../src/core/budget-periods.js';
import { RuleBroken } from '../../src/core/rule.js';
import { budgetCallLine, Budgets, budgetStopLine } from '../../src/lookup/budget.js';
import { storeLedger } from '../../src/lookup/spend-ledgers.js';
import { budgets } from '../../src/options/rules.js';
import { ResultStore } from '../../src/store/result-store.js';

const at = (iso: string) => Date.parse(iso);

describe('the rule of --budget', () => {
  it('takes N, N/day and N/month, as text or a number, alone or in a list', () => {
    expect(budgets('200')).toEqual([{ credits: 200, per: 'run' }]);
    expect(budgets(200)).toEqual([{ credits: 200, per: 'run' }]);
    expect(budgets('200/day')).toEqual([{ credits: 200, per: 'day' }]);
    expect(budgets(' 5000 / Month ')).toEqual([{ credits: 5000, per: 'month' }]);
    expect(budgets(['2000/day', 20000, '0/month'])).toEqual([
      { credits: 2000, per: 'day' },
      { credits: 20000, per: 'run' },
      { credits: 0, per: 'month' },
    ]);
  });

  it.each(['10/week', '-5/day', 'abc', '1.5/day', '', '/day', -1, 2.5])('refuses %j, naming the forms it takes', (raw) => {
    expect(() => budgets(raw)).toThrow(RuleBroken);
    expect(() => budgets(raw)).toThrow('must be N (credits for this run), N/day or N/month (a UTC day or month), N a whole number, such as 2000/day');
  });

  it('refuses an empty list', () => {
    expect(() => budgets([])).toThrow(RuleBroken);
  });
});

describe('UTC periods', () => {
  it('a day and a month are UTC calendar periods', () => {
    expect(periodAt('day', at('2026-03-14T23:59:59.999Z'))).toEqual({
      per: 'day',
      start: at('2026-03-14T00:00:00Z'),
      end: at('2026-03-15T00:00:00Z'),
      key: '2026-03-14',
    });
    expect(periodAt('month', at('2026-12-31T12:00:00Z'))).toEqual({
      per: 'month',
      start: at('2026-12-01T00:00:00Z'),
      end: at('2027-01-01T00:00:00Z'),
      key: '2026-12',
    });
    expect(periodAt('month', at('2028-02-29T00:00:00Z')).key).toBe('2028-02');
  });

  it('says when the period starts again', () => {
    const now = at('2026-03-14T18:48:00Z');
    expect(resetText(periodAt('day', now), now)).toBe('the day resets at 00:00 UTC, in 5h 12m');
    expect(resetText(periodAt('month', now), now)).toBe('the month resets on 2026-04-01 at 00:00 UTC, in 17d 5h');
  });
});

/** Budgets (none: []) over a store's ledger of service `svc`, on a clock the test moves. */
function budgetsOn(store: ResultStore, limits: string | number | Array<string | number>, clock: { now: number }, runId = 'run-1', service = 'svc') {
  const parsed = Array.isArray(limits) && limits.length === 0 ? [] : budgets(limits);
  return new Budgets({ limits: parsed, ledger: storeLedger(store, runId, 60_000, service), now: () => clock.now, service, runId });
}

describe('budgets over the ledger', () => {
  it('records every charged call, and refuses the call that could pass a day budget, naming it', async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const clock = { now: at('2026-03-14T18:48:00Z') };
    const run = budgetsOn(store, '20/day', clock);
    for (const charged of [4, 4, 0, 4, 4]) {
      const ticket = await run.tryBegin('lookup_email', 4);
      expect(ticket).toBeDefined();
      await run.finish(ticket!, charged); // four found at 4, one miss
    }
    store.flush();
    // 16 spent: one more at 4 fits (it holds the 4 left); then none.
    expect(await run.tryBegin('lookup_email', 4)).toMatchObject({ cost: 4 });
    expect(await run.tryBegin('lookup_email', 4)).toBeUndefined();
    expect(run.stopped).toMatchObject({ limit: { credits: 20, per: 'day' }, spent: 16, held: 4 });
    // In a program's words (a library caller's run): the option as it passed it.
    expect(budgetStopLine(run.stopped!)).toBe(
      'No more lookups: the next one could have spent more than budget 20/day (16 of 20 credits spent on 2026-03-14 (UTC), 4 more held by lookups in flight); the rows not looked up are written as skipped (budget); the day resets at 00:00 UTC, in 5h 12m: run the same command again then to finish',
    );
    expect(store.spend().ledger.days(31, 'svc')).toEqual([{ period: '2026-03-14', credits: 16, calls: 4, lapsed: 0 }]);
    store.close();
  });

  it('a call holds the most a call of its operation was ever charged by its service (the ledger remembers), this run’s dearer ones too', async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const clock = { now: at('2026-03-14T10:00:00Z') };
    const earlier = budgetsOn(store, [], clock, 'earlier');
    await earlier.finish((await earlier.tryBegin('lookup_email', 8))!, 14);
    await budgetsOn(store, [], clock, 'elsewhere', 'other-service').finish(
      (await budgetsOn(store, [], clock, 'x', 'other-service').tryBegin('lookup_url', 8))!,
      40,
    );
    store.flush();
    const run = budgetsOn(store, '100/day', clock);
    // 14 spent: a person lookup holds 14 (not 8): six fit in 86, the sixth holding what is left.
    const tickets = [];
    for (let i = 0; i < 6; i++) tickets.push(await run.tryBegin('lookup_email', 8));
    expect(tickets.every((ticket) => ticket !== undefined)).toBe(true);
    expect(await run.tryBegin('lookup_email', 8)).toBeUndefined();
    // Another operation of the service has no dearer record: it holds what it is given.
    expect(await budgetsOn(store, '100/day', clock, 'run-3').tryBegin('lookup_url', 4)).toBeUndefined();
    for (const ticket of tickets) await run.finish(ticket!, 0);
    store.flush();
    const next = budgetsOn(store, '100/day', clock, 'run-4');
    const first = await next.tryBegin('lookup_url', 4);
    await next.finish(first!, 20);
    store.flush();
    // This run's dearer answer raises its own holds at once: 100 - 14 - 20 = 66 left, three at 20 then the rest.
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await next.tryBegin('lookup_url', 4));
    expect(held.map((ticket) => ticket !== undefined)).toEqual([true, true, true, false]);
    store.close();
  });

  it('a call in flight holds its worst case: a second run on the same store sees it', async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const clock = { now: at('2026-03-14T10:00:00Z') };
    const first = budgetsOn(store, '10/day', clock, 'run-1');
    const second = budgetsOn(store, '10/day', clock, 'run-2');
    const held = await first.tryBegin('lookup_email', 8);
    expect(held).toBeDefined();
    expect(await second.tryBegin('lookup_email', 2)).toBeUndefined();
    // Settled as a miss: the hold goes with the commit, and the other run may spend.
    await first.finish(held!, 0);
    store.flush();
    expect(await second.tryBegin('lookup_email', 4)).toBeDefined();
    store.close();
  });

  it('the tighter budget binds and is named: a month nearly spent before a day', async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const clock = { now: at('2026-03-10T12:00:00Z') };
    const earlier = budgetsOn(store, [], clock, 'earlier');
    for (let i = 0; i < 5; i++) await earlier.finish((await earlier.tryBegin('lookup_url', 4))!, 180);
    store.flush();
    clock.now = at('2026-03-15T12:00:00Z');
    const run = budgetsOn(store, ['200/day', '1000/month'], clock);
    await run.finish((await run.tryBegin('lookup_email', 8))!, 8);
    store.flush();
    // 908 spent this month: 92 left of the month, 192 of the day.
    expect(await run.tryBegin('lookup_email', 100)).toBeUndefined();
    expect(run.stopped?.limit).toEqual({ credits: 1000, per: 'month' });
    expect(budgetStopLine(run.stopped!)).toContain('budget 1000/month (908 of 1000 credits spent in 2026-03 (UTC))');
    expect(budgetStopLine(run.stopped!)).toContain('the month resets on 2026-04-01 at 00:00 UTC, in 16d 12h');
    store.close();
  });

  it('a new day, and a new month, may spend again (the clock moved, not waited for)', async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const clock = { now: at('2026-03-31T23:50:00Z') };
    const day = budgetsOn(store, '8/day', clock, 'a');
    await day.finish((await day.tryBegin('lookup_email', 8))!, 8);
    store.flush();
    expect(await day.tryBegin('lookup_email', 4)).toBeUndefined();
    const month = budgetsOn(store, '8/month', clock, 'b');
    expect(await month.tryBegin('lookup_email', 4)).toBeUndefined();
    clock.now = at('2026-04-01T00:10:00Z');
    expect(await budgetsOn(store, '16/month', clock, 'c').tryBegin('lookup_email', 8)).toBeDefined();
    expect(await budgetsOn(store, '16/day', clock, 'd').tryBegin('lookup_email', 8)).toBeDefined();
    // The 16 held just now are April's.
    expect(await budgetsOn(store, '16/day', clock, 'e').tryBegin('lookup_email', 4)).toBeUndefined();
    expect(store.spend().ledger.months(12, 'svc')).toEqual([{ period: '2026-03', credits: 8, calls: 1, lapsed: 0 }]);
    store.close();
  });

  it("a run's own budget counts this run's charges only, and its last call holds what is left", async () => {
    const store = ResultStore.open({ path: ':memory:' });
    const clock = { now: at('2026-03-14T10:00:00Z') };
    const other = budgetsOn(store, [], clock, 'other');
    await other.finish((await other.tryBegin('lookup_url', 4))!, 100);
    const run = budgetsOn(store, ['12', 30], clock);
    await run.finish((await run.tryBegin('lookup_email', 4))!, 5);
    // 7 left of 12: a call at 5 fits and holds all 7 (no second one could follow it).
    expect(await run.tryBegin('lookup_email', 4)).toMatchObject({ cost: 7 });
    expect(await run.tryBegin('lookup_email', 1)).toBeUndefined();
    expect(run.stopped).toMatchObject({ limit: { credits: 12, per: 'run' }, spent: 5, held: 7, period: undefined });
    expect(budgetStopLine(run.stopped!)).toContain('budget 12 (5 credits spent by this run, 7 more held by lookups in flight)');
    store.close();
  });
});

describe('the stop lines', () => {
  const period = periodAt('day', at('2026-03-14T18:48:00Z'));
  const stop = { limit: { credits: 300, per: 'day' as const }, spent: 290, held: 8, period, at: at('2026-03-14T18:48:00Z') };

  it("names when another run's held credits count as spent if it has stopped, as well as the period's reset", () => {
    expect(budgetStopLine({ ...stop, lapseInMs: 290_000 })).toBe(
      'No more lookups: the next one could have spent more than budget 300/day (290 of 300 credits spent on 2026-03-14 (UTC), 8 more held by lookups in flight (answered soon, or, if their run has stopped, counted as spent at 18:52:50 UTC, in 4m 50s)); the rows not looked up are written as skipped (budget); the day resets at 00:00 UTC, in 5h 12m: run the same command again then to finish',
    );
    // Only this run's own lookups held: nothing to lapse.
    expect(budgetStopLine(stop)).toContain('(290 of 300 credits spent on 2026-03-14 (UTC), 8 more held by lookups in flight); the rows');
  });

  it('a single call refused: nothing sent, when to run it again', () => {
    expect(budgetCallLine({ ...stop, held: 0 })).toBe(
      'Not sent: the call could have spent more than budget 300/day (290 of 300 credits spent on 2026-03-14 (UTC)); the day resets at 00:00 UTC, in 5h 12m: run it again then',
    );
  });
});

// The exact edges of --budget (docs/cli-contract.md, "Spending over days and months"): a call starts
// only when what was spent, plus the worst case of the calls in flight, plus its own worst case stays
// within every budget; a budget of 8 takes a call of worst case 8 and refuses one of 9. A hold is
// released on every path (settled, refused by another budget, the ledger failing), and the periods
// are the UTC calendar's, to the millisecond.
import { describe, expect, it } from 'vitest';
import {
  budgetText,
  dayNumber,
  isPeriodLimit,
  periodAt,
  periodWords,
  resetText,
  type BudgetLimit,
  type Period,
  type PeriodLimit,
} from '../../src/core/budget-periods.js';
import { budgetCallLine, Budgets, budgetStopLine, standingOf, type HeldCall, type SpendLedger } from '../../src/lookup/budget.js';
import { storeLedger } from '../../src/lookup/spend-ledgers.js';
import type { Charge, HoldRefusal } from '../../src/store/store-spend.js';
import { ResultStore } from '../../src/store/result-store.js';

const at = (iso: string) => Date.parse(iso);
const NOW = at('2026-03-14T10:00:00Z');

/** A ledger in memory that refuses nothing and records what it was asked: the run's own budget alone decides. */
class OpenLedger implements SpendLedger {
  readonly reserved: Array<{ op: string; cost: number; limits: readonly PeriodLimit[]; at: number }> = [];
  readonly settled: Array<{ hold: HeldCall | undefined; charge: Charge | undefined }> = [];
  most = new Map<string, number>();
  mostAsked = 0;
  fail: Error | undefined;
  refuse: HoldRefusal | undefined;
  spent = new Map<string, number>();
  #seq = 0;

  reserve(op: string, cost: number, limits: readonly PeriodLimit[], at: number): { seq: number } | HoldRefusal {
    if (this.fail) throw this.fail;
    this.reserved.push({ op, cost, limits, at });
    return this.refuse ?? { seq: (this.#seq += 1) };
  }
  settle(hold: HeldCall | undefined, charge: Charge | undefined): void {
    this.settled.push({ hold, charge });
  }
  standing(period: Period): { spent: number; held: number } {
    return { spent: this.spent.get(period.key) ?? 0, held: 0 };
  }
  mostCharged(): Map<string, number> {
    this.mostAsked += 1;
    return this.most;
  }
}

function runBudget(credits: number | number[], ledger = new OpenLedger()) {
  const limits: BudgetLimit[] = [credits].flat().map((n) => ({ credits: n, per: 'run' }));
  return { budgets: new Budgets({ limits, ledger, now: () => NOW, service: 'svc', runId: 'run-1' }), ledger };
}

describe("a run's own budget, at its edge", () => {
  it('a budget of 8 takes a call whose worst case is 8, and refuses one of 9, sending nothing to the ledger', async () => {
    const fits = runBudget(8);
    expect(await fits.budgets.tryBegin('lookup_email', 8)).toMatchObject({ op: 'lookup_email', cost: 8, at: NOW, seq: 1 });
    expect(fits.budgets.stopped).toBeUndefined();
    const passes = runBudget(8);
    expect(await passes.budgets.tryBegin('lookup_email', 9)).toBeUndefined();
    expect(passes.ledger.reserved).toEqual([]);
    expect(passes.budgets.stopped).toEqual({ limit: { credits: 8, per: 'run' }, spent: 0, held: 0, period: undefined, at: NOW });
  });

  it('the tightest of several run budgets binds', async () => {
    const { budgets } = runBudget([20, 8, 12]);
    expect(await budgets.tryBegin('lookup_email', 9)).toBeUndefined();
    expect(budgets.stopped?.limit).toEqual({ credits: 8, per: 'run' });
  });

  it('what was spent and what calls in flight hold both count: 8 spent and 8 in flight leave a 24 budget room for exactly 8', async () => {
    const { budgets } = runBudget(24);
    const first = (await budgets.tryBegin('lookup_email', 8))!;
    await budgets.finish(first, 8);
    expect(budgets.spent).toBe(8);
    const inFlight = await budgets.tryBegin('lookup_email', 8);
    expect(inFlight).toMatchObject({ cost: 8 });
    expect(await budgets.tryBegin('lookup_email', 9)).toBeUndefined();
    expect(budgets.stopped).toMatchObject({ spent: 8, held: 8 });
    // The stop is the first refusal's: a later one does not replace it.
    expect(await budgets.tryBegin('lookup_email', 8)).toMatchObject({ cost: 8 });
    expect(await budgets.tryBegin('lookup_email', 1)).toBeUndefined();
    expect(budgets.stopped).toMatchObject({ spent: 8, held: 8 });
  });

  it('a call holds its own worst case while another like it could still follow; the last one that fits holds all that is left', async () => {
    // 16 left, worst case 8: another 8 could follow, so it holds 8.
    const even = runBudget(16).budgets;
    expect(await even.tryBegin('lookup_email', 8)).toMatchObject({ cost: 8 });
    expect(await even.tryBegin('lookup_email', 8)).toMatchObject({ cost: 8 });
    expect(await even.tryBegin('lookup_email', 1)).toBeUndefined();
    // 15 left: no second call of 8 could follow, so the first holds all 15, and nothing else starts.
    const odd = runBudget(15).budgets;
    expect(await odd.tryBegin('lookup_email', 8)).toMatchObject({ cost: 15 });
    expect(await odd.tryBegin('lookup_email', 1)).toBeUndefined();
    expect(odd.stopped).toMatchObject({ spent: 0, held: 15 });
  });

  it('what a call holds of the run is what its settlement releases: a miss gives it all back', async () => {
    const { budgets } = runBudget(15);
    const all = (await budgets.tryBegin('lookup_email', 8))!;
    await budgets.finish(all, 0);
    expect(budgets.spent).toBe(0);
    expect(await budgets.tryBegin('lookup_email', 8)).toMatchObject({ cost: 15 });
  });

  it("the ledger asks for the call's worst case, not what it holds of the run, against the period budgets only", async () => {
    const ledger = new OpenLedger();
    const limits: BudgetLimit[] = [
      { credits: 15, per: 'run' },
      { credits: 100, per: 'day' },
      { credits: 900, per: 'month' },
    ];
    const budgets = new Budgets({ limits, ledger, now: () => NOW, service: 'svc', runId: 'run-1' });
    expect(await budgets.tryBegin('lookup_url', 8)).toMatchObject({ cost: 15 });
    expect(ledger.reserved).toEqual([
      {
        op: 'lookup_url',
        cost: 8,
        limits: [
          { credits: 100, per: 'day' },
          { credits: 900, per: 'month' },
        ],
        at: NOW,
      },
    ]);
  });
});

describe('a hold is released on every path', () => {
  it('the ledger failing (Redis lost): what the run held is given back and the error goes to the caller', async () => {
    const { budgets, ledger } = runBudget(8);
    ledger.fail = new Error('ledger gone');
    await expect(budgets.tryBegin('lookup_email', 8)).rejects.toThrow('ledger gone');
    ledger.fail = undefined;
    expect(await budgets.tryBegin('lookup_email', 8)).toMatchObject({ cost: 8 });
  });

  it("a period budget refusing: the run's own hold is given back, and the stop names the period budget with the ledger's figures", async () => {
    const { budgets, ledger } = runBudget(10);
    const day = periodAt('day', NOW);
    ledger.refuse = { refused: { credits: 8, per: 'day' }, spent: 3, held: 2, period: day, lapseInMs: 5000 };
    expect(await budgets.tryBegin('lookup_email', 9)).toBeUndefined();
    expect(budgets.stopped).toEqual({ limit: { credits: 8, per: 'day' }, spent: 3, held: 2, period: day, at: NOW, lapseInMs: 5000 });
    ledger.refuse = undefined;
    // Had the 9 stayed held, 1 of the run's 10 would be left.
    expect(await budgets.tryBegin('lookup_email', 8)).toMatchObject({ cost: 10 });
  });

  it('a settled call releases its hold in the ledger and records its charge; a miss records no charge, only the release', async () => {
    const { budgets, ledger } = runBudget(100);
    const found = (await budgets.tryBegin('lookup_email', 8))!;
    const miss = (await budgets.tryBegin('lookup_url', 8))!;
    await budgets.finish(found, 6);
    await budgets.finish(miss, 0);
    expect(ledger.settled).toEqual([
      { hold: { seq: found.seq, at: NOW, op: 'lookup_email' }, charge: { at: NOW, service: 'svc', op: 'lookup_email', credits: 6, runId: 'run-1' } },
      { hold: { seq: miss.seq, at: NOW, op: 'lookup_url' }, charge: undefined },
    ]);
    expect(budgets.spent).toBe(6);
  });

  it('a ticket the ledger gave no hold settles with its charge alone, and one with neither charge nor hold asks nothing of the ledger', async () => {
    const { budgets, ledger } = runBudget(100);
    await budgets.finish({ op: 'lookup_email', cost: 8, at: NOW, seq: undefined }, 4);
    await budgets.finish({ op: 'lookup_email', cost: 8, at: NOW, seq: undefined }, 0);
    expect(ledger.settled).toEqual([{ hold: undefined, charge: { at: NOW, service: 'svc', op: 'lookup_email', credits: 4, runId: 'run-1' } }]);
  });
});

describe('the dearest call remembered', () => {
  it('a call holds the most its operation was ever charged, read from the ledger once', async () => {
    const { budgets, ledger } = runBudget(100);
    ledger.most.set('lookup_email', 12);
    expect(await budgets.tryBegin('lookup_email', 8)).toMatchObject({ cost: 12 });
    expect(await budgets.tryBegin('lookup_url', 8)).toMatchObject({ cost: 8 });
    expect(ledger.reserved.map((r) => r.cost)).toEqual([12, 8]);
    expect(ledger.mostAsked).toBe(1);
  });

  it("this run's dearer answer raises the next holds of its operation, and a cheaper one does not lower them", async () => {
    const { budgets } = runBudget(1000);
    await budgets.finish((await budgets.tryBegin('lookup_email', 8))!, 14);
    expect(await budgets.tryBegin('lookup_email', 8)).toMatchObject({ cost: 14 });
    await budgets.finish((await budgets.tryBegin('lookup_email', 8))!, 10);
    expect(await budgets.tryBegin('lookup_email', 8)).toMatchObject({ cost: 14 });
    expect(await budgets.tryBegin('lookup_url', 8)).toMatchObject({ cost: 8 });
  });

  it('a given worst case above the remembered one is held as given', async () => {
    const { budgets, ledger } = runBudget(100);
    ledger.most.set('lookup_email', 12);
    expect(await budgets.tryBegin('lookup_email', 20)).toMatchObject({ cost: 20 });
  });
});

describe('where each budget stands', () => {
  it("the run's budget against this run's charges, a period's against its ledger; never below 0 left", async () => {
    const ledger = new OpenLedger();
    ledger.spent.set('2026-03-14', 30).set('2026-03', 250);
    const limits: BudgetLimit[] = [
      { credits: 20, per: 'run' },
      { credits: 25, per: 'day' },
      { credits: 1000, per: 'month' },
    ];
    const budgets = new Budgets({ limits, ledger, now: () => NOW, service: 'svc', runId: 'run-1' });
    await budgets.finish((await budgets.tryBegin('lookup_email', 8))!, 8);
    expect(await budgets.standings()).toEqual([
      { budget: '20', credits: 20, per: 'run', spent: 8, left: 12 },
      { budget: '25/day', credits: 25, per: 'day', spent: 30, left: 0, period: '2026-03-14' },
      { budget: '1000/month', credits: 1000, per: 'month', spent: 250, left: 750, period: '2026-03' },
    ]);
    expect(await standingOf({ credits: 5, per: 'run' }, ledger, NOW, 9)).toEqual({ budget: '5', credits: 5, per: 'run', spent: 9, left: 0 });
    expect(await standingOf({ credits: 5, per: 'run' }, ledger, NOW)).toMatchObject({ spent: 0, left: 5 });
  });
});

describe('day and month budgets over the store, at their edge', () => {
  for (const per of ['day', 'month'] as const) {
    it(`a budget of 8/${per} takes a call whose worst case is 8, and refuses one of 9`, async () => {
      const store = ResultStore.open({ path: ':memory:' });
      const make = (runId: string) =>
        new Budgets({ limits: [{ credits: 8, per }], ledger: storeLedger(store, runId, 60_000, 'svc'), now: () => NOW, service: 'svc', runId });
      expect(await make('a').tryBegin('lookup_email', 9)).toBeUndefined();
      const fits = make('b');
      const ticket = await fits.tryBegin('lookup_email', 8);
      expect(ticket).toMatchObject({ cost: 8 });
      await fits.finish(ticket!, 8);
      store.flush();
      // All 8 spent: not even a call of 1 fits now.
      const after = make('c');
      expect(await after.tryBegin('lookup_email', 1)).toBeUndefined();
      expect(after.stopped).toMatchObject({ limit: { credits: 8, per }, spent: 8, held: 0 });
      store.close();
    });
  }
});

describe('UTC periods, to the millisecond', () => {
  it('a day runs from 00:00:00.000 UTC to the next, whatever the time zone', () => {
    const start = at('2026-03-14T00:00:00.000Z');
    expect(periodAt('day', start)).toEqual({ per: 'day', start, end: at('2026-03-15T00:00:00.000Z'), key: '2026-03-14' });
    expect(periodAt('day', start - 1)).toEqual({ per: 'day', start: at('2026-03-13T00:00:00.000Z'), end: start, key: '2026-03-13' });
    expect(periodAt('day', at('2026-03-14T23:59:59.999Z')).key).toBe('2026-03-14');
  });

  it('a month runs from its first day to the next month’s, across a year end and a leap day', () => {
    expect(periodAt('month', at('2027-01-01T00:00:00.000Z'))).toEqual({
      per: 'month',
      start: at('2027-01-01T00:00:00Z'),
      end: at('2027-02-01T00:00:00Z'),
      key: '2027-01',
    });
    expect(periodAt('month', at('2027-01-01T00:00:00.000Z') - 1)).toEqual({
      per: 'month',
      start: at('2026-12-01T00:00:00Z'),
      end: at('2027-01-01T00:00:00Z'),
      key: '2026-12',
    });
    expect(periodAt('month', at('2028-02-29T23:59:59.999Z'))).toEqual({
      per: 'month',
      start: at('2028-02-01T00:00:00Z'),
      end: at('2028-03-01T00:00:00Z'),
      key: '2028-02',
    });
  });

  it('a day number counts whole UTC days since 1970-01-01', () => {
    expect(dayNumber(0)).toBe(0);
    expect(dayNumber(86_400_000 - 1)).toBe(0);
    expect(dayNumber(86_400_000)).toBe(1);
    expect(dayNumber(at('2026-03-14T23:59:59.999Z'))).toBe(20526);
    expect(dayNumber(at('2026-03-15T00:00:00.000Z'))).toBe(20527);
  });

  it('names a budget and its period as a user types and reads them', () => {
    expect(budgetText({ credits: 200, per: 'run' })).toBe('200');
    expect(budgetText({ credits: 200, per: 'day' })).toBe('200/day');
    expect(budgetText({ credits: 2000, per: 'month' })).toBe('2000/month');
    expect(isPeriodLimit({ credits: 1, per: 'run' })).toBe(false);
    expect(isPeriodLimit({ credits: 1, per: 'day' })).toBe(true);
    expect(isPeriodLimit({ credits: 1, per: 'month' })).toBe(true);
    expect(periodWords({ per: 'day', key: '2026-03-14' })).toBe('on 2026-03-14 (UTC)');
    expect(periodWords({ per: 'month', key: '2026-03' })).toBe('in 2026-03 (UTC)');
  });

  it('the reset is said at least a second away, never "in 0s", even at the very end of the period', () => {
    const day = periodAt('day', NOW);
    expect(resetText(day, day.end - 1)).toBe('the day resets at 00:00 UTC, in 1s');
    expect(resetText(day, day.end - 1000)).toBe('the day resets at 00:00 UTC, in 1s');
    expect(resetText(periodAt('month', NOW), at('2026-03-31T23:59:59.500Z'))).toBe('the month resets on 2026-04-01 at 00:00 UTC, in 1s');
  });

  it('a single call refused by a budget with no period names no reset', () => {
    expect(budgetCallLine({ limit: { credits: 5, per: 'run' }, spent: 5, held: 0, period: undefined, at: NOW })).toBe(
      'Not sent: the call could have spent more than budget 5 (5 credits spent by this run)',
    );
  });

  it('the stop line of a run budget says to run again with a larger budget, and names no reset', () => {
    const line = budgetStopLine({ limit: { credits: 12, per: 'run' }, spent: 12, held: 0, period: undefined, at: NOW });
    expect(line).toBe(
      'No more lookups: the next one could have spent more than budget 12 (12 credits spent by this run); the rows not looked up are written as skipped (budget). Run the same command again (with a larger budget) to finish',
    );
  });
});

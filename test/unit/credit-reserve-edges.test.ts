// The credit reserve at its edges (docs/api-behaviour-notes.md, "Credits"): a billable call starts
// only when the balance, less what calls in flight hold at their worst case, less its own worst
// case, stays at or above the reserve; a found answer is charged what its content costs, a miss or
// a failure nothing; an unpublished price is learned from the balance's fall; and on the request
// path every reservation, of the reserve and of the budgets, is released whatever the call's end.
import { describe, expect, it } from 'vitest';
import type { ApiResponse } from '../../src/api/transport.js';
import { Budgets, type SpendLedger } from '../../src/lookup/budget.js';
import { answerCost, budgetHold, CreditGuard, PHONE_COST, PUBLISHED_FOUND_COST, SharedCreditGuard, type SharedCreditStore } from '../../src/lookup/credits.js';
import type { ApiCall, Send } from '../../src/lookup/request-path/request.js';
import { CreditRefusedError, withCredits, withReserveCheck } from '../../src/lookup/request-path/with-credits.js';

describe('the published prices', () => {
  it('a person found costs 4, and 2 more per phone number its answer carries', () => {
    expect(PUBLISHED_FOUND_COST).toBe(4);
    expect(PHONE_COST).toBe(2);
    expect(answerCost('lookup_email', { lead: { name: 'Jane' } }, 99)).toBe(4);
    expect(answerCost('lookup_url', { lead: { phones: ['+1', '+2', '+3'] } }, 99)).toBe(10);
    expect(answerCost('lookup_email', { lead: { phones: '+1 555' } }, 99)).toBe(4);
    expect(answerCost('lookup_email', undefined, 99)).toBe(4);
    expect(answerCost('lookup_email', {}, 99)).toBe(4);
    // The other operations cost what the guard counts for them.
    expect(answerCost('mx', { lead: { phones: ['+1'] } }, 3)).toBe(3);
    expect(answerCost('whois', {}, 7)).toBe(7);
  });

  it('a budget holds at least a person with two phone numbers (8) for a person lookup, and what it is given for the others', () => {
    expect(budgetHold('lookup_email', 4)).toBe(8);
    expect(budgetHold('lookup_url', 8)).toBe(8);
    expect(budgetHold('lookup_email', 12)).toBe(12);
    expect(budgetHold('mx', 1)).toBe(1);
    expect(budgetHold('whois', 5)).toBe(5);
  });
});

describe('the reserve, at its edge', () => {
  it('a balance of 108 over a reserve of 100 pays for one person at 4 and a second, not a third', () => {
    const guard = new CreditGuard({ balance: 108, reserve: 100 });
    const first = guard.tryBegin('lookup_email');
    expect(first).toEqual({ op: 'lookup_email', cost: 4 });
    // 108 - 4 in flight - 4 = 100: exactly the reserve, allowed.
    expect(guard.tryBegin('lookup_email')).toEqual({ op: 'lookup_email', cost: 4 });
    expect(guard.tryBegin('lookup_email')).toBeUndefined();
    // A miss releases its reservation: one more fits.
    guard.finish(first!, false);
    expect(guard.estimatedBalance).toBe(108);
    expect(guard.tryBegin('lookup_email')).toBeDefined();
  });

  it('a balance of 103 over a reserve of 100 pays for nothing at 4', () => {
    expect(new CreditGuard({ balance: 103, reserve: 100 }).tryBegin('lookup_email')).toBeUndefined();
  });

  it('at the reserve already: a balance equal to it, not one above it', () => {
    expect(new CreditGuard({ balance: 100, reserve: 100 }).atReserve).toBe(true);
    expect(new CreditGuard({ balance: 99, reserve: 100 }).atReserve).toBe(true);
    expect(new CreditGuard({ balance: 101, reserve: 100 }).atReserve).toBe(false);
  });

  it('a found answer is charged what it cost, not what was reserved; the estimate falls by it', () => {
    const guard = new CreditGuard({ balance: 200, reserve: 0 });
    guard.finish(guard.tryBegin('lookup_email')!, true, 10);
    expect(guard.estimatedBalance).toBe(190);
    expect(guard.spent).toBe(10);
    // Dearer than the published price: every later person lookup reserves 10.
    expect(guard.costOf('lookup_email')).toBe(10);
    expect(guard.tryBegin('lookup_email')).toEqual({ op: 'lookup_email', cost: 10 });
    // A cheaper one does not lower it.
    guard.finish({ op: 'lookup_email', cost: 10 }, true, 4);
    expect(guard.costOf('lookup_email')).toBe(10);
    expect(guard.spent).toBe(14);
  });

  it('a charge recorded without a price does not lower what a dearer answer raised the reservation to', () => {
    const guard = new CreditGuard({ balance: 200, reserve: 0 });
    guard.recordCharge('lookup_email', 10);
    guard.recordCharge('lookup_email');
    expect(guard.costOf('lookup_email')).toBe(10);
    expect(guard.spent).toBe(14);
  });

  it('a found answer with no cost given is charged what was reserved', () => {
    const guard = new CreditGuard({ balance: 50, reserve: 0, costs: { mx: 3 } });
    guard.finish(guard.tryBegin('mx')!, true);
    expect(guard.estimatedBalance).toBe(47);
    expect(guard.spent).toBe(3);
  });

  it('402 and the reserve reached both stop every later call', () => {
    const paid = new CreditGuard({ balance: 1000, reserve: 0 });
    expect(paid.exhausted).toBe(false);
    paid.markExhausted();
    expect(paid.exhausted).toBe(true);
    expect(paid.tryBegin('mx')).toBeUndefined();
    const reached = new CreditGuard({ balance: 1000, reserve: 0 });
    reached.stop();
    expect(reached.exhausted).toBe(true);
    expect(reached.tryBegin('lookup_email')).toBeUndefined();
  });

  it('known costs are what a call reserves; anything unknown is reserved at the published price', () => {
    const guard = new CreditGuard({ balance: 100, reserve: 0, costs: { mx: 1, lookup_url: 6 } });
    expect(guard.costOf('mx')).toBe(1);
    expect(guard.costOf('lookup_url')).toBe(6);
    expect(guard.costOf('whois')).toBe(4);
    expect(guard.reserve).toBe(0);
    expect(guard.startBalance).toBe(100);
  });
});

describe('what a run spent, and the prices it learns', () => {
  it('a person recorded without a price counts at its known price, else the published one; the others at their learned price', () => {
    const guard = new CreditGuard({ balance: 1000, reserve: 0, costs: { lookup_url: 6, mx: 2 } });
    guard.recordCharge('lookup_email');
    guard.recordCharge('lookup_url');
    guard.recordCharge('mx');
    guard.recordCharge('mx');
    expect(guard.spent).toBe(4 + 6 + 2 * 2);
  });

  it('learns from the third charge on, not before, rounding the fall per charge', () => {
    const twice = new CreditGuard({ balance: 1000, reserve: 0 });
    for (let i = 0; i < 2; i++) twice.finish(twice.tryBegin('whois')!, true);
    twice.reading(1000 - 2);
    expect(twice.costOf('whois')).toBe(4);
    const thrice = new CreditGuard({ balance: 1000, reserve: 0 });
    for (let i = 0; i < 3; i++) thrice.finish(thrice.tryBegin('whois')!, true);
    thrice.reading(1000 - 4); // 4 / 3 = 1.33: 1 a call
    expect(thrice.costOf('whois')).toBe(1);
    expect(thrice.estimatedBalance).toBe(996);
  });

  it('learns nothing when the balance rose (credits were added), and starts each reading afresh', () => {
    const guard = new CreditGuard({ balance: 100, reserve: 0 });
    for (let i = 0; i < 3; i++) guard.finish(guard.tryBegin('whois')!, true);
    guard.reading(500);
    expect(guard.costOf('whois')).toBe(4);
    expect(guard.estimatedBalance).toBe(500);
    // The charges before that reading are not counted again at the next.
    guard.finish(guard.tryBegin('whois')!, true);
    guard.reading(499);
    expect(guard.costOf('whois')).toBe(4);
  });

  it('takes off what the other operations cost first, and learns nothing when they explain more than the fall', () => {
    const guard = new CreditGuard({ balance: 1000, reserve: 0 });
    for (let i = 0; i < 2; i++) guard.finish(guard.tryBegin('lookup_email')!, true);
    for (let i = 0; i < 3; i++) guard.finish(guard.tryBegin('mx')!, true);
    guard.reading(1000 - 7); // the persons explain 8 of a fall of 7: nothing left for mx
    expect(guard.costOf('mx')).toBe(4);
    for (let i = 0; i < 2; i++) guard.finish(guard.tryBegin('lookup_email')!, true);
    for (let i = 0; i < 3; i++) guard.finish(guard.tryBegin('mx')!, true);
    guard.reading(993 - 8 - 6);
    expect(guard.costOf('mx')).toBe(2);
  });

  it('a fall the charges do not explain at all is learned as a price of 0: three charges that left the balance as it was', () => {
    const alone = new CreditGuard({ balance: 1000, reserve: 0 });
    for (let i = 0; i < 3; i++) alone.finish(alone.tryBegin('mx')!, true);
    alone.reading(1000);
    expect(alone.costOf('mx')).toBe(0);
    // The persons explain the whole fall: nothing is left for mx, which is free.
    const beside = new CreditGuard({ balance: 1000, reserve: 0 });
    for (let i = 0; i < 2; i++) beside.finish(beside.tryBegin('lookup_email')!, true);
    for (let i = 0; i < 3; i++) beside.finish(beside.tryBegin('mx')!, true);
    beside.reading(1000 - 8);
    expect(beside.costOf('mx')).toBe(0);
  });

  it('an operation whose price was learned is taken off, and the other one learned', () => {
    const guard = new CreditGuard({ balance: 1000, reserve: 0 });
    for (let i = 0; i < 3; i++) guard.finish(guard.tryBegin('mx')!, true);
    guard.reading(1000 - 6);
    expect(guard.costOf('mx')).toBe(2);
    for (let i = 0; i < 3; i++) guard.finish(guard.tryBegin('mx')!, true);
    for (let i = 0; i < 3; i++) guard.finish(guard.tryBegin('whois')!, true);
    guard.reading(994 - 6 - 9);
    expect(guard.costOf('whois')).toBe(3);
    expect(guard.costOf('mx')).toBe(2);
  });

  it('learns nothing when two operations of unknown price were charged since the reading', () => {
    const guard = new CreditGuard({ balance: 1000, reserve: 0 });
    for (let i = 0; i < 3; i++) guard.finish(guard.tryBegin('mx')!, true);
    for (let i = 0; i < 3; i++) guard.finish(guard.tryBegin('whois')!, true);
    guard.reading(1000 - 6);
    expect(guard.costOf('mx')).toBe(4);
    expect(guard.costOf('whois')).toBe(4);
  });

  it('an operation alone since the reading is learned even with a known price, and never a person’s', () => {
    const guard = new CreditGuard({ balance: 1000, reserve: 0, costs: { mx: 3 } });
    for (let i = 0; i < 3; i++) guard.finish(guard.tryBegin('mx')!, true);
    guard.reading(1000 - 6);
    expect(guard.costOf('mx')).toBe(2);
    // With another, the known one is taken off and not learned again.
    for (let i = 0; i < 3; i++) guard.finish(guard.tryBegin('mx')!, true);
    for (let i = 0; i < 3; i++) guard.finish(guard.tryBegin('whois')!, true);
    guard.reading(994 - 6 - 15);
    expect(guard.costOf('mx')).toBe(2);
    expect(guard.costOf('whois')).toBe(5);
  });
});

/** Redis's side of the shared reserve, recorded; it refuses what `allow` says. */
function sharedStore(allow = true) {
  const said: unknown[][] = [];
  let fail = false;
  const store: SharedCreditStore = {
    creditReading: async (...args) => void said.push(['reading', ...args]),
    tryReserve: async (...args) => (said.push(['reserve', ...args]), allow),
    settle: async (...args) => {
      said.push(['settle', ...args]);
      if (fail) throw new Error('redis gone');
    },
    markExhausted: async () => {
      said.push(['exhausted']);
      if (fail) throw new Error('redis gone');
    },
  };
  return { store, said, failFromNow: () => (fail = true) };
}

describe('the reserve shared through Redis', () => {
  it('starts from the reading it was given, as the run’s start', async () => {
    const { store, said } = sharedStore();
    const guard = await SharedCreditGuard.create({ balance: 500, reserve: 100 }, store);
    expect(said).toEqual([['reading', 500, 100, true]]);
    expect([guard.reserve, guard.startBalance, guard.estimatedBalance, guard.atReserve, guard.exhausted, guard.spent]).toEqual([
      100,
      500,
      500,
      false,
      false,
      0,
    ]);
    expect(guard.costOf('lookup_email')).toBe(4);
  });

  it('Redis decides whether a call may start, at the local worst case', async () => {
    const yes = sharedStore(true);
    expect(await (await SharedCreditGuard.create({ balance: 500, reserve: 100 }, yes.store)).tryBegin('mx')).toEqual({ op: 'mx', cost: 4 });
    expect(yes.said.at(-1)).toEqual(['reserve', 4, 100]);
    const no = sharedStore(false);
    expect(await (await SharedCreditGuard.create({ balance: 500, reserve: 100 }, no.store)).tryBegin('mx')).toBeUndefined();
  });

  it('once stopped, asks Redis nothing', async () => {
    const { store, said } = sharedStore();
    const guard = await SharedCreditGuard.create({ balance: 500, reserve: 100 }, store);
    guard.stop();
    expect(guard.exhausted).toBe(true);
    expect(await guard.tryBegin('mx')).toBeUndefined();
    expect(said.map((s) => s[0])).toEqual(['reading']);
  });

  it('a charge lowers this worker’s estimate by what the answer cost and settles what was reserved; a miss settles uncharged', async () => {
    const { store, said } = sharedStore();
    const guard = await SharedCreditGuard.create({ balance: 500, reserve: 100 }, store);
    await guard.finish({ op: 'lookup_email', cost: 4 }, true, 8);
    expect(guard.estimatedBalance).toBe(492);
    expect(guard.spent).toBe(8);
    expect(guard.costOf('lookup_email')).toBe(8);
    await guard.finish({ op: 'mx', cost: 4 }, false);
    expect(guard.estimatedBalance).toBe(492);
    expect(said.slice(1)).toEqual([
      ['settle', 4, true],
      ['settle', 4, false],
    ]);
  });

  it('Redis lost: a settlement and a 402 are still taken locally, without an error', async () => {
    const { store, said, failFromNow } = sharedStore();
    const guard = await SharedCreditGuard.create({ balance: 500, reserve: 100 }, store);
    failFromNow();
    await expect(guard.finish({ op: 'mx', cost: 4 }, true)).resolves.toBeUndefined();
    expect(guard.estimatedBalance).toBe(496);
    guard.markExhausted();
    expect(guard.exhausted).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(said.at(-1)).toEqual(['exhausted']);
  });

  it('a fresh reading is taken locally and told to Redis', async () => {
    const { store, said } = sharedStore();
    const guard = await SharedCreditGuard.create({ balance: 500, reserve: 100 }, store);
    await guard.reading(90);
    expect(guard.estimatedBalance).toBe(90);
    expect(guard.atReserve).toBe(true);
    expect(said.at(-1)).toEqual(['reading', 90, 100]);
  });
});

const FOUND = { lead: { name: 'Jane', phones: ['+1', '+2', '+3'] } };
const MISS = { lead: {} };
const call: ApiCall = { op: 'lookup_email', input: { email: 'a@b.c' } as ApiCall['input'] };

/** A next step that answers `data` (or fails with it), counting the calls sent. */
function answering(data: unknown): Send & { sent: number } {
  const send = Object.assign(
    async () => {
      send.sent += 1;
      if (data instanceof Error) throw data;
      return { data, status: 200, rate: undefined } as ApiResponse<unknown>;
    },
    { sent: 0 },
  );
  return send;
}

/** A ledger that refuses nothing (or everything, with `refuse`), or fails. */
function memoryLedger(options: { refuse?: boolean; fail?: boolean } = {}): SpendLedger & { settled: unknown[] } {
  const settled: unknown[] = [];
  return {
    settled,
    reserve: () => {
      if (options.fail) throw new Error('ledger gone');
      return options.refuse
        ? { refused: { credits: 1, per: 'day' }, spent: 1, held: 0, period: { per: 'day', start: 0, end: 1, key: '1970-01-01' } }
        : { seq: 1 };
    },
    settle: (hold, charge) => void settled.push({ hold, charge }),
    standing: () => ({ spent: 0, held: 0 }),
    mostCharged: () => new Map(),
  };
}

const budgetsOver = (ledger: SpendLedger, credits = 100) =>
  new Budgets({ limits: [{ credits, per: 'run' }], ledger, now: () => 0, service: 'svc', runId: 'r' });

describe('on the request path: every reservation released, whatever the end', () => {
  it('a found answer is charged its content’s price to the reserve and to the budgets', async () => {
    const credits = new CreditGuard({ balance: 100, reserve: 0 });
    const ledger = memoryLedger();
    const budgets = budgetsOver(ledger);
    expect((await withCredits(answering(FOUND), credits, budgets)(call)).data).toEqual(FOUND);
    expect(credits.estimatedBalance).toBe(90);
    expect(budgets.spent).toBe(10);
    expect(ledger.settled).toMatchObject([{ charge: { credits: 10, op: 'lookup_email' } }]);
    // Nothing left held: the whole budget of 100 less 10 is there for the next call.
    expect(await budgets.tryBegin('lookup_email', 90)).toBeDefined();
  });

  it('a miss costs nothing: both reservations go back', async () => {
    const credits = new CreditGuard({ balance: 8, reserve: 0 });
    const budgets = budgetsOver(memoryLedger(), 8);
    await withCredits(answering(MISS), credits, budgets)(call);
    expect(credits.estimatedBalance).toBe(8);
    expect(budgets.spent).toBe(0);
    expect(credits.tryBegin('lookup_email')).toBeDefined();
    expect(await budgets.tryBegin('lookup_email', 8)).toBeDefined();
  });

  it('a failed call costs nothing, releases both, and fails with its own error', async () => {
    const credits = new CreditGuard({ balance: 4, reserve: 0 });
    const budgets = budgetsOver(memoryLedger(), 8);
    await expect(withCredits(answering(new Error('reset')), credits, budgets)(call)).rejects.toThrow('reset');
    expect(credits.tryBegin('lookup_email')).toBeDefined();
    expect(await budgets.tryBegin('lookup_email', 8)).toBeDefined();
    expect(budgets.spent).toBe(0);
  });

  it('the reserve refusing sends nothing and holds nothing of the budgets', async () => {
    const next = answering(FOUND);
    const ledger = memoryLedger();
    const budgets = budgetsOver(ledger, 8);
    const error = await withCredits(next, new CreditGuard({ balance: 3, reserve: 0 }), budgets)(call).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CreditRefusedError);
    expect(error).toMatchObject({ by: 'credits', name: 'CreditRefusedError', message: 'not looked up: the credit balance reached the reserve' });
    expect(next.sent).toBe(0);
    expect(await budgets.tryBegin('lookup_email', 8)).toBeDefined();
  });

  it('a budget refusing sends nothing and gives the credit reservation back', async () => {
    const next = answering(FOUND);
    const credits = new CreditGuard({ balance: 4, reserve: 0 });
    const error = await withCredits(next, credits, budgetsOver(memoryLedger({ refuse: true })))(call).catch((e: unknown) => e);
    expect(error).toMatchObject({ by: 'budget', message: 'not looked up: the next lookup could have spent more than --budget' });
    expect(next.sent).toBe(0);
    expect(credits.tryBegin('lookup_email')).toBeDefined();
  });

  it('a ledger that fails sends nothing, gives the credit reservation back, and fails with the ledger’s error', async () => {
    const next = answering(FOUND);
    const credits = new CreditGuard({ balance: 4, reserve: 0 });
    await expect(withCredits(next, credits, budgetsOver(memoryLedger({ fail: true })))(call)).rejects.toThrow('ledger gone');
    expect(next.sent).toBe(0);
    expect(credits.tryBegin('lookup_email')).toBeDefined();
  });

  it('while the call is in flight its credit reservation stays held, budgets or not', async () => {
    const credits = new CreditGuard({ balance: 4, reserve: 0 });
    let second: unknown = 'not asked';
    const next: Send = async () => {
      second = credits.tryBegin('lookup_email');
      return { data: MISS, status: 200, rate: undefined } as ApiResponse<unknown>;
    };
    await withCredits(next, credits, budgetsOver(memoryLedger()))(call);
    expect(second).toBeUndefined();
  });

  it('a miss of an operation priced by the balance is not counted as spent', async () => {
    const credits = new CreditGuard({ balance: 100, reserve: 0 });
    const mx = { op: 'mx', input: { domain: 'example.com' } as ApiCall['input'] } as ApiCall;
    await withCredits(answering({ mx_records: [] }), credits)(mx);
    expect(credits.spent).toBe(0);
    await withCredits(answering({ mx_records: ['mx.example'] }), credits)(mx);
    expect(credits.spent).toBe(4);
  });

  it('a refusal says the reserve unless it says a budget', () => {
    expect(new CreditRefusedError().by).toBe('credits');
    expect(new CreditRefusedError().message).toBe('not looked up: the credit balance reached the reserve');
  });

  it('without budgets, only the reserve is asked', async () => {
    const credits = new CreditGuard({ balance: 100, reserve: 0 });
    await withCredits(answering({ mx_records: ['mx.example'] }), credits)({ op: 'mx', input: { domain: 'example.com' } as ApiCall['input'] });
    expect(credits.estimatedBalance).toBe(96);
  });
});

describe('a reserve refusal checked against a fresh balance, once', () => {
  const refused =
    (by: 'credits' | 'budget'): Send =>
    async () => {
      throw new CreditRefusedError(by);
    };

  it('a budget refusal stands at once: no reading, no stop', async () => {
    const credits = new CreditGuard({ balance: 100, reserve: 0 });
    let readings = 0;
    let reached = 0;
    const error = await withReserveCheck(
      refused('budget'),
      credits,
      async () => void (readings += 1),
      () => (reached += 1),
    )(call).catch((e: unknown) => e);
    expect(error).toMatchObject({ by: 'budget' });
    expect([readings, reached, credits.exhausted]).toEqual([0, 0, false]);
  });

  it('another error goes through untouched', async () => {
    const credits = new CreditGuard({ balance: 100, reserve: 0 });
    let readings = 0;
    await expect(
      withReserveCheck(
        answering(new Error('boom')),
        credits,
        async () => void (readings += 1),
        () => {},
      )(call),
    ).rejects.toThrow('boom');
    expect(readings).toBe(0);
  });

  it('a fresh balance at exactly the reserve plus the call’s price sends it again', async () => {
    const credits = new CreditGuard({ balance: 100, reserve: 100 });
    let tries = 0;
    const next: Send = async () => {
      tries += 1;
      if (tries === 1) throw new CreditRefusedError('credits');
      return { data: FOUND, status: 200, rate: undefined } as ApiResponse<unknown>;
    };
    const response = await withReserveCheck(
      next,
      credits,
      async () => credits.reading(104),
      () => {},
    )(call);
    expect(response.data).toEqual(FOUND);
    expect(tries).toBe(2);
  });

  it('a fresh balance short of it by one stops the run: the reserve reached, said once', async () => {
    const credits = new CreditGuard({ balance: 100, reserve: 100 });
    let tries = 0;
    let reached = 0;
    const next: Send = async () => {
      tries += 1;
      throw new CreditRefusedError('credits');
    };
    await expect(
      withReserveCheck(
        next,
        credits,
        async () => credits.reading(103),
        () => (reached += 1),
      )(call),
    ).rejects.toMatchObject({ by: 'credits' });
    expect([tries, reached, credits.exhausted]).toEqual([1, 1, true]);
  });

  it('sent again and refused again: the reserve reached; a budget refusal the second time stands as such', async () => {
    const credits = new CreditGuard({ balance: 100, reserve: 0 });
    let reached = 0;
    await expect(
      withReserveCheck(
        refused('credits'),
        credits,
        async () => {},
        () => (reached += 1),
      )(call),
    ).rejects.toMatchObject({ by: 'credits' });
    expect([reached, credits.exhausted]).toEqual([1, true]);
    const second = new CreditGuard({ balance: 100, reserve: 0 });
    let tries = 0;
    const next: Send = async () => {
      tries += 1;
      throw new CreditRefusedError(tries === 1 ? 'credits' : 'budget');
    };
    await expect(
      withReserveCheck(
        next,
        second,
        async () => {},
        () => {},
      )(call),
    ).rejects.toMatchObject({ by: 'budget' });
    expect(second.exhausted).toBe(false);
  });

  it('already exhausted (a 402): no reading asked, the run stops', async () => {
    const credits = new CreditGuard({ balance: 100, reserve: 0 });
    credits.markExhausted();
    let readings = 0;
    let reached = 0;
    await expect(
      withReserveCheck(
        refused('credits'),
        credits,
        async () => void (readings += 1),
        () => (reached += 1),
      )(call),
    ).rejects.toBeInstanceOf(CreditRefusedError);
    expect([readings, reached]).toEqual([0, 1]);
  });

  it('a reading that fails is taken as no news: the estimate decides', async () => {
    const credits = new CreditGuard({ balance: 100, reserve: 100 });
    let reached = 0;
    await expect(
      withReserveCheck(
        refused('credits'),
        credits,
        async () => Promise.reject(new Error('down')),
        () => (reached += 1),
      )(call),
    ).rejects.toMatchObject({ by: 'credits' });
    expect(reached).toBe(1);
  });
});

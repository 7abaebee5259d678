// `lookup`, `mx` and `whois` held to the day and month budgets (docs/cli-contract.md, "Spending over
// days and months"): a single call holds its worst case in the store's ledger before it is sent
// and is refused, sending nothing, when that could pass a budget (exit 3: code budget); what it is
// charged is recorded there, so the nightly run's budgets count it; its hold is released whatever
// its end. A run's own budget (`N`) is not a single call's. In-process, on a store file of its own.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LeadEnrichError } from '../../src/api/errors.js';
import { chargedCall } from '../../src/cli/charged-call.js';
import type { Target } from '../../src/cli/target.js';
import type { FileConfig } from '../../src/options/config-file.js';
import { ResultStore } from '../../src/store/result-store.js';
import { makeTempDir } from '../helpers/temp-dirs.js';

/** A target whose store is a file of its own; the config file's budget as given. */
function targetWith(fileBudget?: unknown): { target: Target; store: string } {
  const store = path.join(makeTempDir(), 'store.sqlite');
  const file = (fileBudget === undefined ? {} : { budget: fileBudget }) as FileConfig;
  const target = {
    config: { file, fileDoor: { configFile: 'config.json' } },
    service: 'svc',
    storePath: (flag: string | undefined) => flag ?? store,
  } as unknown as Target;
  return { target, store };
}

/** What the store's ledger holds now: the charges of the last days, and the credits still held. */
function ledgerOf(file: string): { days: Array<{ credits: number; calls: number }>; held: number } {
  const store = ResultStore.open({ path: file });
  try {
    const { ledger } = store.spend();
    return { days: ledger.days(3, 'svc').map(({ credits, calls }) => ({ credits, calls })), held: ledger.heldNow('svc') };
  } finally {
    store.close();
  }
}

const person = (phones: number) => ({ lead: { name: 'Jane', phones: Array.from({ length: phones }, (_, i) => `+1 555 010${i}`) } });

async function refusal(work: Promise<unknown>): Promise<LeadEnrichError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LeadEnrichError);
  return error as LeadEnrichError;
}

describe('a single call under a day budget', () => {
  it('a budget of 8/day takes a person lookup (held at 8, a person with two phones), records what it cost, holds nothing after', async () => {
    const { target, store } = targetWith();
    let sent = 0;
    const data = await chargedCall(target, { budget: '8/day' }, 'lookup_email', async () => ((sent += 1), person(1)));
    expect(data).toEqual(person(1));
    expect(sent).toBe(1);
    expect(ledgerOf(store)).toEqual({ days: [{ credits: 6, calls: 1 }], held: 0 });
  });

  it('a budget of 7/day refuses it before anything is sent: code budget, the line naming the budget', async () => {
    const { target, store } = targetWith();
    let sent = 0;
    const error = await refusal(chargedCall(target, { budget: ['7/day'] }, 'lookup_email', async () => ((sent += 1), person(0))));
    expect(error.code).toBe('budget');
    expect(error.message).toMatch(
      /^Not sent: the call could have spent more than (--)?budget 7\/day \(0 of 7 credits spent on \d{4}-\d\d-\d\d \(UTC\)\); the day resets at 00:00 UTC, in /,
    );
    expect(sent).toBe(0);
    expect(ledgerOf(store)).toEqual({ days: [], held: 0 });
  });

  it('what earlier calls were charged counts: 4 spent of 12 leaves room for a worst case of 8, then of nothing', async () => {
    const { target, store } = targetWith();
    await chargedCall(target, { budget: '12/day' }, 'lookup_email', async () => person(0));
    await chargedCall(target, { budget: '12/day' }, 'lookup_email', async () => person(0));
    expect(ledgerOf(store).days).toEqual([{ credits: 8, calls: 2 }]);
    expect((await refusal(chargedCall(target, { budget: '12/day' }, 'lookup_email', async () => person(0)))).code).toBe('budget');
  });

  it('the dearest answer the ledger remembers is what the next call holds: after a person with 4 phones (12), 16 spent of 27 leaves no room', async () => {
    const { target } = targetWith();
    await chargedCall(target, {}, 'lookup_email', async () => person(4));
    // 12 spent; a person lookup by URL has no dearer record: it holds 8 (20 of 27), and is a miss.
    await chargedCall(target, { budget: '27/day' }, 'lookup_url', async () => ({ lead: {} }));
    // By email it holds 12 (24 of 27), and costs 4: 16 spent.
    await chargedCall(target, { budget: '27/day' }, 'lookup_email', async () => person(0));
    // 16 + 12 passes 27 (16 + 8 would not).
    expect((await refusal(chargedCall(target, { budget: '27/day' }, 'lookup_email', async () => person(0)))).code).toBe('budget');
  });
});

describe('what a single call is charged, and its hold released whatever its end', () => {
  it('a miss costs nothing and leaves nothing held', async () => {
    const { target, store } = targetWith();
    await chargedCall(target, { budget: '8/day' }, 'lookup_email', async () => ({ lead: {} }));
    expect(ledgerOf(store)).toEqual({ days: [], held: 0 });
  });

  it('a failed call costs nothing, leaves nothing held, and fails with its own error', async () => {
    const { target, store } = targetWith();
    await expect(chargedCall(target, { budget: '8/day' }, 'lookup_email', async () => Promise.reject(new Error('reset')))).rejects.toThrow('reset');
    expect(ledgerOf(store)).toEqual({ days: [], held: 0 });
    // The whole budget is there for the next call.
    await chargedCall(target, { budget: '8/day' }, 'lookup_email', async () => person(2));
    expect(ledgerOf(store).days).toEqual([{ credits: 8, calls: 1 }]);
  });

  it('mx and whois found are charged the published price; an empty answer nothing', async () => {
    const { target, store } = targetWith();
    await chargedCall(target, {}, 'mx', async () => ({ mx_records: [{ exchange: 'mx.example.com' }] }));
    await chargedCall(target, {}, 'whois', async () => ({ whoisRecord: {} }));
    await chargedCall(target, {}, 'whois', async () => ({ whoisRecord: { registrar: 'x' } }));
    expect(ledgerOf(store).days).toEqual([{ credits: 8, calls: 2 }]);
  });

  it('the month budget counts too', async () => {
    const { target } = targetWith();
    await chargedCall(target, {}, 'lookup_email', async () => person(0));
    expect((await refusal(chargedCall(target, { budget: '11/month' }, 'lookup_email', async () => person(0)))).message).toContain(
      'budget 11/month (4 of 11 credits spent in ',
    );
    await chargedCall(target, { budget: '12/month' }, 'lookup_email', async () => person(0));
  });
});

describe('a single call leaves its store as a closed file', () => {
  // Nothing of the store is left open once the call is over, answered or failed: its write-ahead
  // log folded into the file and gone, so the file alone is the whole store (to copy, or to open
  // from another process).
  const openFiles = (store: string) => ['-wal', '-shm'].filter((end) => fs.existsSync(store + end));

  it('after an answer', async () => {
    const { target, store } = targetWith();
    await chargedCall(target, { budget: '8/day' }, 'lookup_email', async () => person(1));
    expect(openFiles(store)).toEqual([]);
  });

  it('after a failure, and after a refusal', async () => {
    const { target, store } = targetWith();
    await expect(chargedCall(target, { budget: '8/day' }, 'lookup_email', async () => Promise.reject(new Error('reset')))).rejects.toThrow('reset');
    expect(openFiles(store)).toEqual([]);
    await refusal(chargedCall(target, { budget: '7/day' }, 'lookup_email', async () => person(0)));
    expect(openFiles(store)).toEqual([]);
  });
});

describe('which budgets a single call holds to', () => {
  it("a run's own budget (N) is not a single call's", async () => {
    const { target } = targetWith();
    await chargedCall(target, { budget: '1' }, 'lookup_email', async () => person(0));
  });

  it("the config file's budget when no --budget is given, and --budget instead of it when given", async () => {
    const { target } = targetWith('2/day');
    expect((await refusal(chargedCall(target, {}, 'lookup_email', async () => person(0)))).message).toContain('budget 2/day');
    await chargedCall(target, { budget: '100/day' }, 'lookup_email', async () => person(0));
  });

  it('--store names the store whose ledger records the call', async () => {
    const { target, store } = targetWith();
    const other = path.join(makeTempDir(), 'other.sqlite');
    await chargedCall(target, { store: other }, 'lookup_email', async () => person(0));
    expect(ledgerOf(other).days).toEqual([{ credits: 4, calls: 1 }]);
    expect(ledgerOf(store).days).toEqual([]);
  });
});

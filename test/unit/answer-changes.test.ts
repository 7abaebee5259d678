// What changed, compared as the cells are written (write/answer-changes.ts; docs/cli-contract.md,
// "What changed since the last answer"): a row's own lookups looked up again, the changes of
// earlier runs it carries (at its row, or alone when no row stands for their key), and the cells
// --fill fills. Rows made by hand, no store, no server.
import { describe, expect, it } from 'vitest';
import type { CarriedChange, EarlierAnswer, FinishedRow } from '../../src/core/rows.js';
import { AnswerChanges, changeRecords, changeRecordsOf } from '../../src/write/answer-changes.js';
import { CellFill, fillTargets } from '../../src/write/cell-fill.js';
import { columnsFor } from '../../src/write/columns.js';

const person = (title: string | undefined, company = 'Acme') => ({
  email_address: 'ann@acme.com',
  lead: title === undefined ? {} : { name: 'Ann', title, company_name: company },
});
const flags = { mx: false, whois: false };

function earlier(data: unknown, found = true, foundNow = true): EarlierAnswer {
  return { op: 'lookup_email', key: 'ann@acme.com', found, foundNow, data, fetchedAt: 1_000, refetchedAt: 2_000 };
}

function carried(then: unknown, now: unknown, fetched: [number, number], comparable = true): CarriedChange {
  const found = (answer: unknown) => Object.keys((answer as { lead: object }).lead).length > 0;
  return {
    op: 'lookup_email',
    key: 'ann@acme.com',
    found: found(then),
    foundNow: found(now),
    data: then,
    dataNow: now,
    fetchedAt: fetched[0],
    refetchedAt: fetched[1],
    comparable,
  };
}

function rowOf(lead: unknown, extra: Partial<FinishedRow> = {}): FinishedRow {
  return { row: 7, cells: ['ann@acme.com', ''], status: 'found', billing: 'charged', data: { lead: (lead as { lead?: never }).lead }, ...extra };
}

describe('a row looked up again', () => {
  const changes = new AnswerChanges(columnsFor('email', flags, { fields: ['lead_title', 'lead_company_name', 'lead_billing'] }));

  it('each written column whose cell differs, in column order; the columns that say how the run went never', () => {
    const row = rowOf(person('Director', 'Globex'), { earlier: { lead: earlier(person('Manager')) } });
    changes.apply(row);
    expect(row.changes).toEqual([
      { field: 'lead_title', key: 'ann@acme.com', before: 'Manager', after: 'Director', beforeFetchedAt: 1_000, afterFetchedAt: 2_000 },
      { field: 'lead_company_name', key: 'ann@acme.com', before: 'Acme', after: 'Globex', beforeFetchedAt: 1_000, afterFetchedAt: 2_000 },
    ]);
  });

  it('found to not found: status alone; the same answer again (same): nothing; a row with no earlier answer: no changes at all', () => {
    const left = rowOf(person(undefined), { status: 'not_found', earlier: { lead: earlier(person('Manager'), true, false) } });
    const same = rowOf(person('Manager'), { earlier: { lead: { ...earlier(undefined), same: true } } });
    const first = rowOf(person('Manager'));
    for (const row of [left, same, first]) changes.apply(row);
    expect(left.changes!.map((c) => [c.field, c.before, c.after])).toEqual([['status', 'found', 'not_found']]);
    expect(same.changes).toEqual([]);
    expect(first.changes).toBeUndefined();
  });

  it('--with company: its lookup found to not found, or back, is company_status alone', () => {
    const withCompany = new AnswerChanges(columnsFor('email', { ...flags, company: true }));
    const gone = rowOf(person('Manager'), { earlier: { company: earlier(undefined, true, false) } });
    const back = rowOf(person('Manager'), { earlier: { company: earlier(undefined, false, true) } });
    for (const row of [gone, back]) withCompany.apply(row);
    expect(gone.changes!.map((c) => [c.field, c.before, c.after])).toEqual([['company_status', 'found', 'not_found']]);
    expect(back.changes!.map((c) => [c.field, c.before, c.after])).toEqual([['company_status', 'not_found', 'found']]);
  });
});

describe('the changes an earlier run stored (carried)', () => {
  const changes = new AnswerChanges(columnsFor('email', flags, { fields: ['lead_title'] }));

  it("at the row of their key, each compared from its own answer to the next, beside the row's own; not in lead_changed's `changes`", () => {
    const row = rowOf(person('CEO'), {
      earlier: { lead: earlier(person('Director')) },
      carried: { lead: [carried(person('Engineer'), person('Manager'), [100, 500]), carried(person('Manager'), person('Director'), [500, 1_000])] },
    });
    changes.apply(row);
    expect(row.changes!.map((c) => [c.before, c.after])).toEqual([['Director', 'CEO']]);
    expect(row.carriedChanges!.map((c) => [c.before, c.after, c.beforeFetchedAt, c.afterFetchedAt])).toEqual([
      ['Engineer', 'Manager', 100, 500],
      ['Manager', 'Director', 500, 1_000],
    ]);
    // The file's lines: its own first, then the carried ones, all at the row.
    expect(changeRecords(row).map((line) => [line[0], line[3], line[4]])).toEqual([
      ['7', 'Director', 'CEO'],
      ['7', 'Engineer', 'Manager'],
      ['7', 'Manager', 'Director'],
    ]);
  });

  it('one that cannot be compared, or that shows in no column this run writes: no line', () => {
    const row = rowOf(person('CEO'), {
      carried: { lead: [carried(person('A'), person('B'), [1, 2], false), carried(person('A', 'X'), person('A', 'Y'), [2, 3])] },
    });
    changes.apply(row);
    expect(row.carriedChanges).toEqual([]);
  });

  it('of a key no row stands for: compared as a row of that answer alone, with an empty row in the file', () => {
    const lines = changes.alone('lead', [carried(person('Engineer'), person(undefined), [1, 2]), carried(person(undefined), person('CTO'), [2, 3])]);
    expect(lines.map((c) => [c.field, c.before, c.after])).toEqual([
      ['status', 'found', 'not_found'],
      ['status', 'not_found', 'found'],
    ]);
    expect(changeRecordsOf(0, lines).map((line) => line[0])).toEqual(['', '']);
  });
});

describe('--fill: the cells it fills', () => {
  const header = ['email', 'Title'];
  const fillOf = (overwrite: boolean) =>
    new CellFill(fillTargets([{ column: 'Title', field: 'lead_title' }], header, 'email', flags, ''), 'email', flags, overwrite);
  const columns = columnsFor('email', flags, { fields: [] });

  it('compared as written and named by the input column: what the earlier answer filled against what this one fills', () => {
    const changes = new AnswerChanges(columns, fillOf(false));
    const row = rowOf(person('Director'), { earlier: { lead: earlier(person('Manager')) } });
    changes.apply(row);
    expect(row.changes!.map((c) => [c.field, c.before, c.after])).toEqual([['Title', 'Manager', 'Director']]);
    // The answer has no title now: the cell stays as the input has it (blank), and that is the change.
    const gone = rowOf(person(undefined, 'Acme'), { earlier: { lead: earlier(person('Manager')) } });
    gone.data = { lead: { name: 'Ann', company_name: 'Acme' } as never };
    changes.apply(gone);
    expect(gone.changes!.map((c) => [c.field, c.before, c.after])).toEqual([['Title', 'Manager', '']]);
  });

  it('without --overwrite a cell the input holds is never filled: no change; with it, the answer replaces it', () => {
    const held = (overwrite: boolean) => {
      const row = rowOf(person('Director'), { cells: ['ann@acme.com', 'Boss'], earlier: { lead: earlier(person('Manager')) } });
      new AnswerChanges(columns, fillOf(overwrite)).apply(row);
      return row.changes!.map((c) => [c.field, c.before, c.after]);
    };
    expect(held(false)).toEqual([]);
    expect(held(true)).toEqual([['Title', 'Manager', 'Director']]);
  });
});

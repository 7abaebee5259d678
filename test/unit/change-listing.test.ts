// --changes in a run (run/change-listing.ts; docs/cli-contract.md, "Reported once, never absorbed"):
// every change a row's lines cover is recorded as listed, its own (an answer looked up again that
// is not the same) and the carried ones of earlier runs; after the rows, the carried changes of the
// keys no row stood for, with an empty row, of the lookups this run makes only; all marked
// reported once the file is in place. A store that fails costs the run nothing but a warning.
import { describe, expect, it } from 'vitest';
import { StoreFailedError } from '../../src/api/errors.js';
import type { Operation } from '../../src/api/types.js';
import type { CarriedChange, FieldChange, FinishedRow } from '../../src/core/rows.js';
import type { LookupTarget } from '../../src/plan/plan.js';
import { ChangeListing } from '../../src/run/change-listing.js';
import type { ChangeReport } from '../../src/store/change-report.js';
import type { AnswerChanges, Part } from '../../src/write/answer-changes.js';
import type { RowSink } from '../../src/write/row-writer.js';

const T = Date.parse('2026-03-14T10:00:00Z');

function change(op: Operation, key: string, refetchedAt = T): CarriedChange {
  return { op, key, found: true, foundNow: true, data: {}, dataNow: {}, fetchedAt: T - 1000, refetchedAt, comparable: true };
}

const field = (key: string, name = 'lead_title'): FieldChange => ({ field: name, key, before: 'a', after: 'b', beforeFetchedAt: T - 1000, afterFetchedAt: T });

/** A report that records what it is told, and hands `rest` the groups given, for the operations asked. */
function reportOf(rest: CarriedChange[][] = [], fail?: { rest?: Error; mark?: Error }) {
  const listed: string[] = [];
  const askedFor: Array<Set<string>> = [];
  let marked = 0;
  const report = {
    listed: (op: string, key: string, at: number) => void listed.push(`${op} ${key} ${at}`),
    *rest(ops: ReadonlySet<string>) {
      askedFor.push(new Set(ops));
      if (fail?.rest) throw fail.rest;
      for (const group of rest) if (ops.has(group[0]!.op)) yield group;
    },
    markReported: () => {
      if (fail?.mark) throw fail.mark;
      marked += 1;
      return 0;
    },
  } as unknown as ChangeReport;
  return { report, listed, askedFor, marked: () => marked };
}

/** Changes that give each carried change one line per `lines` (none for a key named `quiet`). */
function changesOf(lines = 1): AnswerChanges & { applied: number; alonePart: Part[] } {
  const self = {
    applied: 0,
    alonePart: [] as Part[],
    apply(row: FinishedRow) {
      self.applied += 1;
      if (row.carried)
        row.carriedChanges = Object.values(row.carried).flatMap((cs) => (cs ?? []).flatMap((c) => Array.from({ length: lines }, () => field(c.key))));
    },
    alone(part: Part, cs: readonly CarriedChange[]) {
      self.alonePart.push(part);
      return cs.filter((c) => !c.key.startsWith('quiet')).flatMap((c) => Array.from({ length: lines }, () => field(c.key)));
    },
  };
  return self as unknown as AnswerChanges & { applied: number; alonePart: Part[] };
}

const targets: LookupTarget[] = [{ kind: 'email' } as LookupTarget];
const row = (extra: Partial<FinishedRow>): FinishedRow => ({ row: 1, cells: [], status: 'found', billing: 'charged', ...extra }) as FinishedRow;

function writer() {
  const written: string[][] = [];
  const sink = { writeChangeLines: async (lines: string[][]) => void written.push(...lines) } as unknown as RowSink;
  return { sink, written };
}

describe("a row's lines", () => {
  it("record as listed the row's own changes (not an answer that came back the same) and its carried ones", () => {
    const { report, listed } = reportOf();
    const listing = new ChangeListing(report, changesOf(), targets, []);
    listing.apply(
      row({
        earlier: {
          lead: { op: 'lookup_email', key: 'a@x.example', found: true, foundNow: true, data: {}, fetchedAt: 1, refetchedAt: 2 },
          mx: { op: 'mx', key: 'x.example', found: true, foundNow: true, data: undefined, fetchedAt: 1, refetchedAt: 3, same: true },
        },
        carried: { lead: [change('lookup_email', 'a@x.example', 5), change('lookup_email', 'a@x.example', 6)] },
      }),
    );
    expect(listed).toEqual(['lookup_email a@x.example 2', 'lookup_email a@x.example 5', 'lookup_email a@x.example 6']);
  });

  it('count the keys with carried lines and the lines; a row with none counts nothing', () => {
    const { report } = reportOf();
    const listing = new ChangeListing(report, changesOf(2), targets, ['mx']);
    listing.apply(row({ carried: { lead: [change('lookup_email', 'a@x.example')], mx: [change('mx', 'x.example')] } }));
    listing.apply(row({}));
    expect(listing.counts).toEqual({ keys: 2, lines: 4, keysNotInFile: 0 });
  });
});

describe('after the rows', () => {
  it("lists the rest of the lookups this run makes only, each key's lines at an empty row, and records them", async () => {
    const rest = [
      [change('lookup_email', 'b@x.example', 7), change('lookup_email', 'b@x.example', 8)],
      [change('lookup_domain', 'co.example', 9)],
      [change('whois', 'w.example')],
    ];
    const { report, listed, askedFor } = reportOf(rest);
    const changes = changesOf();
    const listing = new ChangeListing(report, changes, targets, ['company', 'mx']);
    const { sink, written } = writer();
    await listing.listRest(sink, () => {});
    expect(askedFor).toEqual([new Set(['lookup_domain', 'mx', 'lookup_email'])]);
    expect(changes.alonePart).toEqual(['lead', 'company']);
    expect(listed).toEqual(['lookup_email b@x.example 7', 'lookup_email b@x.example 8', 'lookup_domain co.example 9']);
    expect(written.map((line) => [line[0], line[1]])).toEqual([
      ['', 'b@x.example'],
      ['', 'b@x.example'],
      ['', 'co.example'],
    ]);
    expect(listing.counts).toEqual({ keys: 2, lines: 3, keysNotInFile: 2 });
  });

  it('a key with no line (nothing comparable) is recorded as listed all the same, and not counted', async () => {
    const { report, listed } = reportOf([[change('lookup_email', 'quiet@x.example', 4)]]);
    const listing = new ChangeListing(report, changesOf(), targets, []);
    const { sink, written } = writer();
    await listing.listRest(sink, () => {});
    expect(listed).toEqual(['lookup_email quiet@x.example 4']);
    expect(written).toEqual([]);
    expect(listing.counts).toEqual({ keys: 0, lines: 0, keysNotInFile: 0 });
  });

  it('a writer that takes its lines at once is not waited for', async () => {
    const { report } = reportOf([[change('lookup_email', 'b@x.example')]]);
    const listing = new ChangeListing(report, changesOf(), targets, []);
    let lines = 0;
    await listing.listRest({ writeChangeLines: (l: string[][]) => void (lines += l.length) } as unknown as RowSink, () => {});
    expect(lines).toBe(1);
  });

  it('a writer that must drain first holds the next key until it has; its failure is the run’s', async () => {
    const { report } = reportOf([[change('lookup_email', 'b@x.example')], [change('lookup_email', 'c@x.example')]]);
    const listing = new ChangeListing(report, changesOf(), targets, []);
    const keys: string[] = [];
    let drain = () => {};
    const sink = {
      writeChangeLines: (lines: string[][]) => {
        keys.push(lines[0]![1]!);
        return keys.length === 1 ? new Promise<void>((resolve) => (drain = resolve)) : undefined;
      },
    } as unknown as RowSink;
    const listed = listing.listRest(sink, () => {});
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(keys).toEqual(['b@x.example']);
    drain();
    await listed;
    expect(keys).toEqual(['b@x.example', 'c@x.example']);

    const broken = new ChangeListing(reportOf([[change('lookup_email', 'b@x.example')]]).report, changesOf(), targets, []);
    const failing = { writeChangeLines: () => Promise.reject(new Error('EPIPE')) } as unknown as RowSink;
    await expect(broken.listRest(failing, () => {})).rejects.toThrow('EPIPE');
  });

  it('a store that cannot be read now: said, and left to the next run; any other failure is the run’s', async () => {
    const warned: string[] = [];
    const failing = reportOf([], { rest: new StoreFailedError('disk I/O error') });
    await new ChangeListing(failing.report, changesOf(), targets, []).listRest(writer().sink, (line) => warned.push(line));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(
      /^the changes stored before this run for keys not in this file could not be listed \(.*disk I\/O error.*\): the next run with --changes lists them$/,
    );
    const broken = reportOf([], { rest: new TypeError('bug') });
    await expect(new ChangeListing(broken.report, changesOf(), targets, []).listRest(writer().sink, () => {})).rejects.toThrow('bug');
  });
});

describe('once the file is in place', () => {
  it('marks what it lists reported; a store that cannot be written says so, and the next run lists them again', () => {
    const ok = reportOf();
    const warned: string[] = [];
    new ChangeListing(ok.report, changesOf(), targets, []).markReported((line) => warned.push(line));
    expect([ok.marked(), warned]).toEqual([1, []]);
    const failing = reportOf([], { mark: new Error('database is locked') });
    new ChangeListing(failing.report, changesOf(), targets, []).markReported((line) => warned.push(line));
    expect(warned).toEqual([
      'the changes in the --changes file could not be marked as reported (database is locked): the next run with --changes lists them again',
    ]);
  });
});

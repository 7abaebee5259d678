// Stored answers as cells: the store keeps each answer's own added columns beside it
// as one CSV record, so a known row becomes CSV without JSON.parse of the lead; stores of schema
// v1 and v2 are migrated (their answers rendered once) and still answer a re-run with no request.
import fs from 'node:fs';
import path from 'node:path';
import { openSqliteFile } from '../helpers/sqlite.js';
import { afterEach, describe, expect, it } from 'vitest';
import { enrich, type EnrichOptions } from '../../src/run/enrich.js';
import { sandboxAnswer } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { ResultStore, SCHEMA_VERSION } from '../../src/store/result-store.js';
import { ANSWER_CELLS, answerCells, cellsLayout, columnsFor, storedCells, type ColumnChoice } from '../../src/write/columns.js';
import { escapeFormula } from '../../src/write/csv-lines.js';
import { RowWriter } from '../../src/write/row-writer.js';
import { layoutOf, recordOf, splitRecord, storedText } from '../../src/write/stored-cells.js';
import { toBytes } from '../../src/read/index.js';
import { parse } from 'csv-parse/sync';
import type { FinishedRow } from '../../src/core/rows.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';

/** The schema a v1 store was created with (schema.ts, MIGRATIONS[0]), as an older lead-enrich wrote it. */
const V1_SCHEMA = `
  CREATE TABLE services (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
  CREATE TABLE results (
    service_id INTEGER NOT NULL REFERENCES services (id), op TEXT NOT NULL, key TEXT NOT NULL,
    found INTEGER NOT NULL CHECK (found IN (0, 1)), data TEXT, fetched_at INTEGER NOT NULL, run_id TEXT NOT NULL,
    PRIMARY KEY (service_id, op, key)
  );
  CREATE INDEX results_fetched_at ON results (fetched_at);
  CREATE VIEW results_view AS SELECT s.name AS service, r.op, r.key, r.found, r.data, r.fetched_at, r.run_id
    FROM results r JOIN services s ON s.id = r.service_id;
`;

/** A store file of schema v1 holding `answers` (op, key, data) for `service`. */
function writeV1Store(file: string, service: string, answers: Array<[op: string, key: string, found: boolean, data: unknown]>): void {
  const db = openSqliteFile(file);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(V1_SCHEMA);
  db.run('INSERT INTO services (id, name) VALUES (1, ?)', service);
  const insert = 'INSERT INTO results (service_id, op, key, found, data, fetched_at, run_id) VALUES (1, ?, ?, ?, ?, ?, ?)';
  for (const [op, key, found, data] of answers) db.run(insert, op, key, found ? 1 : 0, JSON.stringify(data), Date.now(), 'v1-run');
  db.exec('PRAGMA application_id = 1279610450'); // 'LENR'
  db.exec('PRAGMA user_version = 1');
  db.close();
}

/**
 * What schema v2 made of a v1 file: a `cells` column holding each lookup answer's cells as a JSON
 * array led by the layout of CELLS_VERSION 1 (the form this version replaced).
 */
function upgradeToV2(file: string): void {
  const db = openSqliteFile(file);
  db.exec('ALTER TABLE results ADD COLUMN cells TEXT');
  const rows = db.rows("SELECT rowid, data FROM results WHERE op = 'lookup_email'") as Array<[number, string]>;
  for (const [rowid, data] of rows) {
    db.run(
      'UPDATE results SET cells = ? WHERE rowid = ?',
      JSON.stringify([`1:${cellsLayout('lookup_email')!.slice(2)}`, ...answerCells('lookup_email', JSON.parse(data))!]),
      rowid,
    );
  }
  db.exec('PRAGMA user_version = 2');
  db.close();
}

const rowOf = (data: unknown): FinishedRow => ({ row: 1, cells: [], status: 'found', billing: 'cached', data: { lead: (data as { lead?: never }).lead } });

const LEAD = {
  lead: {
    name: 'Ana =Ortiz',
    title: 'CTO, "Data"',
    company_name: 'Acme',
    total_experience_in_months: 42,
    id: 7,
    addresses: [{ full_address: 'Rua 1, Porto', city: 'Porto', country: 'Portugal', country_code: 'PT' }],
    profile_picture: { url: 'x' },
  },
};

const NASTY = ['', 'a,b', 'say "hi"', 'two\nlines', 'cr\r\nlf', '=SUM(A1)', '+1', '-', '@x', '\tTab', 'Zoë € 東', '"', ',', '""', 'end,', "'quoted"];

describe('answer cells', () => {
  it('are exactly the cells the writer renders from the parsed answer, for person and company lookups', () => {
    const person = columnsFor('email', { mx: false, whois: false });
    const company = columnsFor('domain', { mx: false, whois: false });
    const companyAnswer = { lead: { name: 'Acme', addresses: { full_address: 'Main St 1', country: 'US' }, id: 'c1' } };
    // The writer's cells minus lead_billing, which is the row's own.
    expect(answerCells('lookup_email', LEAD)).toEqual(person.values(rowOf(LEAD)).slice(0, -1));
    expect(answerCells('lookup_url', LEAD)).toEqual(person.values(rowOf(LEAD)).slice(0, -1));
    expect(answerCells('lookup_domain', companyAnswer)).toEqual(company.values(rowOf(companyAnswer)).slice(0, -1));
    expect(answerCells('lookup_email', { lead: {} })).toEqual(new Array(15).fill(''));
    expect(answerCells('mx', { mx_records: [] })).toBeUndefined();
    // A row carrying a stored record renders its cells (formula-escaped), whatever its data says.
    const record = recordOf(storedCells('lookup_email', LEAD)!, cellsLayout('lookup_email')!)!;
    expect(person.values({ ...rowOf({}), cellsRecord: record })).toEqual([...answerCells('lookup_email', LEAD)!.map(escapeFormula), 'cached']);
  });

  it('are kept as one comma-separated record led by their layout, which splits back into the same cells', () => {
    const layout = layoutOf(['a', 'b']);
    expect(layout).toMatch(/^3:[0-9a-f]{8}$/);
    for (const cells of [NASTY, [''], ['', ''], new Array(15).fill(''), ['only'], ['"', '"'], ['a\n', '\nb']]) {
      const text = storedText(layout, cells);
      expect(text.startsWith(`${layout},`)).toBe(true);
      expect(splitRecord(recordOf(text, layout)!)).toEqual(cells.map(escapeFormula));
      // It is CSV as the writer writes it with ',' (csv-parse reads it back; one empty cell is an empty line to it).
      if (text !== `${layout},`) expect(parse(recordOf(text, layout)!, { relax_quotes: false })).toEqual([cells.map(escapeFormula)]);
    }
    // Cells of another layout, of schema v2's JSON form, or a layout that only begins the same way.
    expect(recordOf(storedText(layoutOf(['a', 'c']), ['x']), layout)).toBeUndefined();
    expect(recordOf(JSON.stringify([layout, 'x']), layout)).toBeUndefined();
    expect(recordOf(`${layout}0,x`, layout)).toBeUndefined();
    expect(recordOf(layout, layout)).toBeUndefined();
  });

  it('come back from the store (pending or committed) as their record when asked for, and as data when not', () => {
    const store = ResultStore.open({ path: ':memory:', flushIntervalMs: 60_000, flushBatchSize: 1000 });
    const record = recordOf(storedCells('lookup_email', LEAD)!, cellsLayout('lookup_email')!);
    try {
      store.put('svc', 'lookup_email', 'a@x.test', { found: true, data: LEAD, cells: ANSWER_CELLS.render('lookup_email', LEAD) }, 'r1');
      const pending = store.getMany('svc', 'lookup_email', ['a@x.test'], undefined, cellsLayout('lookup_email')).get('a@x.test');
      expect(pending).toMatchObject({ found: true, data: undefined, cellsRecord: record });
      expect(store.getMany('svc', 'lookup_email', ['a@x.test']).get('a@x.test')?.data).toEqual(LEAD);
      store.flush();
      const committed = store.getMany('svc', 'lookup_email', ['a@x.test', 'b@x.test'], undefined, cellsLayout('lookup_email'));
      expect([...committed.keys()]).toEqual(['a@x.test']);
      expect(committed.get('a@x.test')).toMatchObject({ data: undefined, cellsRecord: record });
      const asData = store.getMany('svc', 'lookup_email', ['a@x.test']).get('a@x.test');
      expect(asData?.data).toEqual(LEAD);
      expect(asData?.cellsRecord).toBeUndefined();
      // MX answers have no cells: they come as data either way.
      store.put('svc', 'mx', 'x.test', { found: true, data: { mx_records: [{ exchange: 'mx.x.test', priority: 10 }] } }, 'r1');
      store.flush();
      const mx = store.getMany('svc', 'mx', ['x.test'], undefined, cellsLayout('mx')).get('x.test');
      expect(mx?.data).toEqual({ mx_records: [{ exchange: 'mx.x.test', priority: 10 }] });
      expect(mx?.cellsRecord).toBeUndefined();
    } finally {
      store.close();
    }
  });

  it('are never used when another version rendered them (another layout or form): the answer itself is read', () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const store = ResultStore.open({ path: file, flushIntervalMs: 0 });
    try {
      for (const key of ['a@x.test', 'b@x.test', 'c@x.test'])
        store.put('svc', 'lookup_email', key, { found: true, data: LEAD, cells: ANSWER_CELLS.render('lookup_email', LEAD) }, 'r1');
    } finally {
      store.close();
    }
    // b's cells as a version with other columns would have left them, c's in schema v2's JSON form.
    const db = openSqliteFile(file);
    const layout = cellsLayout('lookup_email')!;
    expect(db.value("SELECT cells FROM results WHERE key = 'a@x.test'")).toBe(storedCells('lookup_email', LEAD));
    db.run("UPDATE results SET cells = ? WHERE key = 'b@x.test'", storedText('2:00000000', answerCells('lookup_email', LEAD)!.slice(1)));
    db.run("UPDATE results SET cells = ? WHERE key = 'c@x.test'", JSON.stringify(['1:' + layout.slice(2), ...answerCells('lookup_email', LEAD)!]));
    db.close();
    const reopened = ResultStore.open({ path: file });
    try {
      const got = reopened.getMany('svc', 'lookup_email', ['a@x.test', 'b@x.test', 'c@x.test'], undefined, layout);
      expect(got.get('a@x.test')).toMatchObject({ data: undefined, cellsRecord: recordOf(storedCells('lookup_email', LEAD)!, layout) });
      for (const key of ['b@x.test', 'c@x.test']) {
        expect(got.get(key)?.cellsRecord).toBeUndefined();
        expect(got.get(key)?.data).toEqual(LEAD);
      }
    } finally {
      reopened.close();
    }
  });

  it('are written as the same bytes as cells rendered from the answer: comma, semicolon, --fields, --prefix', async () => {
    const dir = makeTempDir();
    const nasty = { lead: { ...LEAD.lead, name: '=HYPERLINK("x")', title: NASTY.join('|'), company_name: 'Zoë, "Ü" & Co\r\nGmbH' } };
    const header = ['email', 'note'].map(toBytes);
    const write = async (file: string, delimiter: string, choice: ColumnChoice, stored: boolean) => {
      const writer = new RowWriter({
        output: file,
        errors: undefined,
        format: 'csv',
        header,
        columns: columnsFor('email', { mx: false, whois: false }, choice),
        recordDelimiter: '\r\n',
        delimiter,
        bom: false,
        headerLine: true,
      });
      const rows: FinishedRow[] = [LEAD, nasty, { lead: {} }].map((answer, i) => ({
        ...rowOf(stored ? {} : answer),
        row: i + 1,
        cells: [`r${i}@x.test`, 'a;b,"c"'].map(toBytes),
        ...(stored ? { cellsRecord: recordOf(storedCells('lookup_email', answer)!, cellsLayout('lookup_email')!) } : {}),
      }));
      await writer.writeRows(rows);
      await writer.commit();
      return fs.readFileSync(file);
    };
    for (const [delimiter, choice] of [
      [',', {}],
      [';', {}],
      ['\t', {}],
      [',', { fields: ['lead_title', 'lead_name', 'lead_billing'] }],
      [',', { prefix: 'x_' }],
    ] as const) {
      const fromAnswer = await write(path.join(dir, 'answer.csv'), delimiter, choice, false);
      const fromRecord = await write(path.join(dir, 'record.csv'), delimiter, choice, true);
      expect(fromRecord.toString('utf8')).toBe(fromAnswer.toString('utf8'));
      expect(fromRecord.toString('utf8')).toContain("'=HYPERLINK");
    }
  });

  it('migrates a v1 store file: renders the answers it holds once, keeps their data and leaves mx without cells', () => {
    const file = path.join(makeTempDir(), 'old.sqlite');
    writeV1Store(file, 'svc', [
      ['lookup_email', 'a@x.test', true, LEAD],
      ['lookup_email', 'b@x.test', false, { lead: {} }],
      ['mx', 'x.test', true, { mx_records: [] }],
    ]);
    expectMigrated(file, 1);
  });

  it('migrates a v2 store file (cells as JSON arrays): renders them again as records, once', () => {
    const file = path.join(makeTempDir(), 'v2.sqlite');
    writeV1Store(file, 'svc', [
      ['lookup_email', 'a@x.test', true, LEAD],
      ['lookup_email', 'b@x.test', false, { lead: {} }],
      ['mx', 'x.test', true, { mx_records: [] }],
    ]);
    upgradeToV2(file);
    expectMigrated(file, 2);
  });
});

/** Opens an older store (said once through onUpgrade) and checks what it answers, from cells and from data. */
function expectMigrated(file: string, from: number): void {
  const layout = cellsLayout('lookup_email')!;
  const upgrades: Array<[number, number]> = [];
  const store = ResultStore.open({ path: file, onUpgrade: (a, b) => upgrades.push([a, b]), cells: ANSWER_CELLS });
  expect(upgrades).toEqual([[from, SCHEMA_VERSION]]);
  try {
    expect(store.getMany('svc', 'lookup_email', ['a@x.test', 'b@x.test'], undefined, cellsLayout('lookup_email'))).toEqual(
      new Map([
        ['a@x.test', expect.objectContaining({ found: true, runId: 'v1-run', cellsRecord: recordOf(storedCells('lookup_email', LEAD)!, layout) })],
        ['b@x.test', expect.objectContaining({ found: false, cellsRecord: ','.repeat(14) })],
      ]),
    );
    expect(store.get('svc', 'lookup_email', 'a@x.test')?.data).toEqual(LEAD);
    expect(store.stats().entries).toBe(3);
  } finally {
    store.close();
  }
  // Once: the next open finds the current schema.
  ResultStore.open({ path: file, onUpgrade: (a, b) => upgrades.push([a, b]) }).close();
  expect(upgrades).toHaveLength(1);
  const db = openSqliteFile(file, { readonly: true });
  expect(db.pragma('user_version')).toBe(SCHEMA_VERSION);
  expect(db.value("SELECT cells FROM results WHERE op = 'mx'")).toBeNull();
  db.close();
}

describe('a store written by an older lead-enrich (schema v1 or v2)', () => {
  const sandboxes: Sandbox[] = [];
  afterEach(async () => {
    await Promise.all(sandboxes.splice(0).map((s) => s.close()));
  });

  it.each([1, 2])('of schema v%i answers a re-run of the same file from the store: no request, the same bytes as a fresh run', async (version) => {
    const s = await startSandbox({ port: 0, rpm: 60_000 });
    sandboxes.push(s);
    const dir = makeTempDir();
    const keys = emails(40);
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...keys.map((e) => [e])]);
    const run = (store: string, output: string, extra: Partial<EnrichOptions> = {}) =>
      enrich({ baseUrl: s.baseUrl, token: s.token, service: 'svc', input, store, output, ...extra });
    const fresh = await run(path.join(dir, 'fresh.sqlite'), path.join(dir, 'fresh.csv'));
    const lookups = s.stats.byOperation.lookup_email;
    expect(lookups).toBe(40);

    const old = path.join(dir, 'old.sqlite');
    writeV1Store(
      old,
      'svc',
      keys.map((key) => {
        const answer = sandboxAnswer('lookup_email', key);
        return ['lookup_email', key, answer.kind === 'found', answer.kind === 'rejected' ? {} : answer.data] as [string, string, boolean, unknown];
      }),
    );
    if (version === 2) upgradeToV2(old);
    const warnings: string[] = [];
    const rerun = await run(old, path.join(dir, 'rerun.csv'), { onWarning: (line) => warnings.push(line) });
    // The upgrade is said, since on a large store it takes a while; a fresh store says nothing.
    // Every answer is stored, so the account is not read either, and that is said too.
    expect(warnings).toEqual([
      expect.stringMatching(new RegExp(`^Upgrading the result store at .*old\\.sqlite from schema v${version} to v${SCHEMA_VERSION}, once`)),
      'no lookup to make: every answer is stored; the account was not read (the API was not asked)',
    ]);
    expect(s.stats.byOperation.lookup_email).toBe(lookups);
    expect(rerun.billing).toMatchObject({ cached: 40, charged: 0, free: 0 });
    const withoutBilling = (file: string) => readCsvObjects(file).map(({ lead_billing: _b, ...rest }) => rest);
    expect(withoutBilling(path.join(dir, 'rerun.csv'))).toEqual(withoutBilling(path.join(dir, 'fresh.csv')));
    // Byte for byte, but for lead_billing (the last column): cached here, charged or free there.
    const linesWithoutBilling = (file: string) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => line.slice(0, line.lastIndexOf(',')));
    expect(linesWithoutBilling(path.join(dir, 'rerun.csv'))).toEqual(linesWithoutBilling(path.join(dir, 'fresh.csv')));
    // A second re-run reads the store as this version left it: the same bytes again.
    await run(old, path.join(dir, 'again.csv'), { onWarning: (line) => warnings.push(line) });
    // No second upgrade: only the notice that the account was not read comes again.
    expect(warnings.filter((line) => line.startsWith('Upgrading'))).toHaveLength(1);
    expect(fs.readFileSync(path.join(dir, 'again.csv'), 'utf8')).toBe(fs.readFileSync(path.join(dir, 'rerun.csv'), 'utf8'));
    expect(s.stats.byOperation.lookup_email).toBe(lookups);
    expect(fresh.billing.charged + fresh.billing.free).toBe(40);

    // JSON Lines needs the whole answer: the same store gives it, still with no request.
    await run(old, path.join(dir, 'rerun.jsonl'), { format: 'jsonl' });
    expect(s.stats.byOperation.lookup_email).toBe(lookups);
    const lines = fs
      .readFileSync(path.join(dir, 'rerun.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { lead?: unknown });
    expect(lines.filter((l) => l.lead !== undefined).length).toBeGreaterThan(0);
  });
});

// Stored answers as cells (issue 16): the store keeps each answer's own added columns beside it,
// so a known row becomes CSV cells without JSON.parse of the lead; stores of schema v1 are
// migrated (their answers rendered once) and still answer a re-run with no request.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { enrich, type EnrichOptions } from '../src/run/enrich.js';
import { sandboxAnswer } from '../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { ResultStore, SCHEMA_VERSION } from '../src/store/result-store.js';
import { answerCells, cellsLayout, columnsFor } from '../src/write/columns.js';
import type { FinishedRow } from '../src/run/finished-row.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from './helpers/files.js';

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
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(V1_SCHEMA);
  db.prepare('INSERT INTO services (id, name) VALUES (1, ?)').run(service);
  const insert = db.prepare('INSERT INTO results (service_id, op, key, found, data, fetched_at, run_id) VALUES (1, ?, ?, ?, ?, ?, ?)');
  for (const [op, key, found, data] of answers) insert.run(op, key, found ? 1 : 0, JSON.stringify(data), Date.now(), 'v1-run');
  db.pragma('application_id = 1279610450'); // 'LENR'
  db.pragma('user_version = 1');
  db.close();
}

const LEAD = {
  lead: {
    name: 'Ana =Ortiz', title: 'CTO, "Data"', company_name: 'Acme', total_experience_in_months: 42, id: 7,
    addresses: [{ full_address: 'Rua 1, Porto', city: 'Porto', country: 'Portugal', country_code: 'PT' }],
    profile_picture: { url: 'x' },
  },
};

describe('answer cells', () => {
  it('are exactly the cells the writer renders from the parsed answer, for person and company lookups', () => {
    const row = (data: unknown): FinishedRow => ({ row: 1, cells: [], status: 'found', billing: 'cached', data: { lead: (data as { lead?: never }).lead } });
    const person = columnsFor('email', { mx: false, whois: false });
    const company = columnsFor('domain', { mx: false, whois: false });
    const companyAnswer = { lead: { name: 'Acme', addresses: { full_address: 'Main St 1', country: 'US' }, id: 'c1' } };
    // The writer's cells minus lead_billing, which is the row's own.
    expect(answerCells('lookup_email', LEAD)).toEqual(person.values(row(LEAD)).slice(0, -1));
    expect(answerCells('lookup_url', LEAD)).toEqual(person.values(row(LEAD)).slice(0, -1));
    expect(answerCells('lookup_domain', companyAnswer)).toEqual(company.values(row(companyAnswer)).slice(0, -1));
    expect(answerCells('lookup_email', { lead: {} })).toEqual(new Array(15).fill(''));
    expect(answerCells('mx', { mx_records: [] })).toBeUndefined();
    // A row carrying cells renders them, whatever its data says.
    const cells = answerCells('lookup_email', LEAD)!;
    expect(person.values({ ...row({}), answerCells: cells })).toEqual([...cells, 'cached']);
  });

  it('come back from the store (pending or committed) instead of the data when asked for, and data when not', () => {
    const store = ResultStore.open({ path: ':memory:', flushIntervalMs: 60_000, flushBatchSize: 1000 });
    try {
      store.put('svc', 'lookup_email', 'a@x.test', { found: true, data: LEAD }, 'r1');
      const pending = store.getMany('svc', 'lookup_email', ['a@x.test'], undefined, 'cells').get('a@x.test');
      expect(pending).toMatchObject({ found: true, data: undefined, cells: answerCells('lookup_email', LEAD) });
      store.flush();
      const committed = store.getMany('svc', 'lookup_email', ['a@x.test', 'b@x.test'], undefined, 'cells');
      expect([...committed.keys()]).toEqual(['a@x.test']);
      expect(committed.get('a@x.test')).toMatchObject({ data: undefined, cells: answerCells('lookup_email', LEAD) });
      const asData = store.getMany('svc', 'lookup_email', ['a@x.test']).get('a@x.test');
      expect(asData?.data).toEqual(LEAD);
      expect(asData?.cells).toBeUndefined();
      // MX answers have no cells: they come as data either way.
      store.put('svc', 'mx', 'x.test', { found: true, data: { mx_records: [{ exchange: 'mx.x.test', priority: 10 }] } }, 'r1');
      store.flush();
      const mx = store.getMany('svc', 'mx', ['x.test'], undefined, 'cells').get('x.test');
      expect(mx?.data).toEqual({ mx_records: [{ exchange: 'mx.x.test', priority: 10 }] });
      expect(mx?.cells).toBeUndefined();
    } finally {
      store.close();
    }
  });

  it('are never used when another version rendered them (another layout): the answer itself is read', () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const store = ResultStore.open({ path: file, flushIntervalMs: 0 });
    try {
      store.put('svc', 'lookup_email', 'a@x.test', { found: true, data: LEAD }, 'r1');
      store.put('svc', 'lookup_email', 'b@x.test', { found: true, data: LEAD }, 'r1');
    } finally {
      store.close();
    }
    // b's cells as a version with other columns would have left them: one cell fewer, another layout.
    const db = new Database(file);
    const layout = cellsLayout('lookup_email')!;
    expect(JSON.parse(db.prepare("SELECT cells FROM results WHERE key = 'a@x.test'").pluck().get() as string)[0]).toBe(layout);
    db.prepare("UPDATE results SET cells = ? WHERE key = 'b@x.test'").run(JSON.stringify(['0:00000000', ...answerCells('lookup_email', LEAD)!.slice(1)]));
    db.close();
    const reopened = ResultStore.open({ path: file });
    try {
      const got = reopened.getMany('svc', 'lookup_email', ['a@x.test', 'b@x.test'], undefined, 'cells');
      expect(got.get('a@x.test')).toMatchObject({ data: undefined, cells: answerCells('lookup_email', LEAD) });
      expect(got.get('b@x.test')?.cells).toBeUndefined();
      expect(got.get('b@x.test')?.data).toEqual(LEAD);
    } finally {
      reopened.close();
    }
  });

  it('migrates a v1 store file: renders the answers it holds once, keeps their data and leaves mx without cells', () => {
    const file = path.join(makeTempDir(), 'old.sqlite');
    writeV1Store(file, 'svc', [['lookup_email', 'a@x.test', true, LEAD], ['lookup_email', 'b@x.test', false, { lead: {} }], ['mx', 'x.test', true, { mx_records: [] }]]);
    const store = ResultStore.open({ path: file });
    try {
      expect(store.getMany('svc', 'lookup_email', ['a@x.test', 'b@x.test'], undefined, 'cells')).toEqual(
        new Map([
          ['a@x.test', expect.objectContaining({ found: true, runId: 'v1-run', cells: answerCells('lookup_email', LEAD) })],
          ['b@x.test', expect.objectContaining({ found: false, cells: new Array(15).fill('') })],
        ]),
      );
      expect(store.get('svc', 'lookup_email', 'a@x.test')?.data).toEqual(LEAD);
      expect(store.stats().entries).toBe(3);
    } finally {
      store.close();
    }
    const db = new Database(file, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.prepare("SELECT cells FROM results WHERE op = 'mx'").pluck().get()).toBeNull();
    db.close();
  });
});

describe('a store written by an older lead-enrich (schema v1)', () => {
  const sandboxes: Sandbox[] = [];
  afterEach(async () => {
    await Promise.all(sandboxes.splice(0).map((s) => s.close()));
  });

  it('answers a re-run of the same file from the store: no request, the same cells as a fresh run', async () => {
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
    writeV1Store(old, 'svc', keys.map((key) => {
      const answer = sandboxAnswer('lookup_email', key);
      return ['lookup_email', key, answer.kind === 'found', answer.kind === 'rejected' ? {} : answer.data] as [string, string, boolean, unknown];
    }));
    const rerun = await run(old, path.join(dir, 'rerun.csv'));
    expect(s.stats.byOperation.lookup_email).toBe(lookups);
    expect(rerun.billing).toMatchObject({ cached: 40, charged: 0, free: 0 });
    const withoutBilling = (file: string) => readCsvObjects(file).map(({ lead_billing: _b, ...rest }) => rest);
    expect(withoutBilling(path.join(dir, 'rerun.csv'))).toEqual(withoutBilling(path.join(dir, 'fresh.csv')));
    expect(fresh.billing.charged + fresh.billing.free).toBe(40);

    // JSON Lines needs the whole answer: the same store gives it, still with no request.
    await run(old, path.join(dir, 'rerun.jsonl'), { format: 'jsonl' });
    expect(s.stats.byOperation.lookup_email).toBe(lookups);
    const lines = fs.readFileSync(path.join(dir, 'rerun.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { lead?: unknown });
    expect(lines.filter((l) => l.lead !== undefined).length).toBeGreaterThan(0);
  });
});

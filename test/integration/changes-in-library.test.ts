// What changed since the last answer, for programs (docs/library.md): enrichRows gives
// `changes: [{ field, before, after }]` on every result of a key looked up again ([] when nothing
// changed) and no `changes` on the others; a key met again in the same run (in the same batch, or
// in a later one) carries the same changes as the row that fetched it; a --with company lookup
// made again is compared too, under the domain's key; and the --changes file appears only complete.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Lead } from '../../src/api/types.js';
import { enrich } from '../../src/run/enrich.js';
import { enrichRows, type RowResult } from '../../src/run/enrich-rows.js';
import { sandboxAnswer } from '../../src/sandbox/data.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';
import { accountOnlyServer } from '../helpers/servers.js';
import { openSqliteFile } from '../helpers/sqlite.js';

const DAY = 86_400_000;

const sandbox = sandboxesPerTest();
const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

async function all<T>(results: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const result of results) out.push(result);
  return out;
}

const leadAt = (key: string, epoch: number) => {
  const answer = sandboxAnswer('lookup_email', key, { drift: 0.3, epoch });
  return answer.kind === 'found' ? (answer.data.lead as Lead) : undefined;
};

describe('enrichRows: changes', () => {
  it('on every result of a key looked up again, [] when nothing changed; absent for a first answer and for one from the store', async () => {
    const s = await sandbox({ drift: 0.3 });
    const people = emails(120);
    const rows = people.map((email) => ({ email }));
    const options = { baseUrl: s.baseUrl, token: s.token, store: path.join(makeTempDir(), 'store.sqlite') };
    const first = await all(enrichRows(rows, options));
    expect(first.every((r) => !('changes' in r))).toBe(true);
    s.nextDay();
    const again = await all(enrichRows(rows, { ...options, refresh: true }));
    let changed = 0;
    for (const [i, result] of again.entries()) {
      const [then, now] = [leadAt(people[i]!, 0), leadAt(people[i]!, 1)];
      expect(result.changes, people[i]).toBeDefined();
      if (JSON.stringify(then) === JSON.stringify(now)) {
        expect(result.changes).toEqual([]);
      } else if (then && now) {
        changed += 1;
        expect(result.changes).toContainEqual({ field: 'lead_title', before: then.title, after: now.title });
        expect(result.changes).toContainEqual({ field: 'lead_company_name', before: then.company_name, after: now.company_name });
        expect(result.changes!.map((c) => c.field)).toEqual(['lead_title', 'lead_constructed_title', 'lead_company_name', 'lead_company_domain']);
      } else {
        changed += 1;
        expect(result.changes).toEqual([{ field: 'status', before: then ? 'found' : 'not_found', after: now ? 'found' : 'not_found' }]);
      }
    }
    expect(changed).toBeGreaterThan(20);
    const stored = await all(enrichRows(rows, options));
    expect(stored.every((r) => r.billing === 'cached' && !('changes' in r))).toBe(true);
  });

  it('a key met again in the same run carries the changes of the row that fetched it, in its batch or a later one', async () => {
    const s = await sandbox({ drift: 0.3 });
    const people = emails(200);
    const mover = people.find((key) => leadAt(key, 0) && leadAt(key, 1) && leadAt(key, 0)!.title !== leadAt(key, 1)!.title)!;
    // The mover at rows 1, 2 (the same batch) and 200 (a later batch: enrichRows reads 64 rows at a time).
    const rows = [mover, mover, ...people.filter((key) => key !== mover).slice(0, 197), mover].map((email) => ({ email }));
    const options = { baseUrl: s.baseUrl, token: s.token, store: path.join(makeTempDir(), 'store.sqlite') };
    await all(enrichRows(rows, options));
    s.nextDay();
    const results = await all(enrichRows(rows, { ...options, refresh: true }));
    const ofMover = [results[0]!, results[1]!, results.at(-1)!];
    expect(ofMover.map((r) => r.billing)).toEqual(['charged', 'duplicate', 'duplicate']);
    expect(ofMover[0]!.changes).toContainEqual({ field: 'lead_title', before: leadAt(mover, 0)!.title, after: leadAt(mover, 1)!.title });
    for (const result of ofMover) expect(result.changes).toEqual(ofMover[0]!.changes);
    // A key first looked up by this run, met again, has no earlier answer.
    const fresh = 'new.person@company1.com';
    const withNew = await all(enrichRows([...rows.slice(0, 70), { email: fresh }, ...rows.slice(0, 70), { email: fresh }], { ...options, refresh: true }));
    expect(withNew.filter((r: RowResult<{ email: string }>) => r.input.email === fresh).map((r) => [r.billing, 'changes' in r])).toEqual([
      ['charged', false],
      ['duplicate', false],
    ]);
  });
});

describe('--with company: the company looked up again is compared under its domain', () => {
  it('a renamed company shows in company_name for every row at that company, the person unchanged', async () => {
    let companyName = 'Acme Inc';
    const api = await accountOnlyServer((req) => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname.endsWith('/reverse_lookup/domain')) {
        return { status: 200, body: JSON.stringify({ status: 'success', data: { name: 'acme.com', lead: { name: companyName, id: 'c1' } } }) };
      }
      const email = url.searchParams.get('email_address');
      return {
        status: 200,
        body: JSON.stringify({ status: 'success', data: { email_address: email, lead: { name: 'Ann', title: 'CTO', company_domain: 'acme.com' } } }),
      };
    });
    closers.push(api.close);
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com'], ['bob@acme.com']]);
    const options = { input, baseUrl: api.baseUrl, token: 'token-0123456789', store: path.join(dir, 'store.sqlite'), with: ['company' as const] };
    await enrich({ ...options, output: path.join(dir, 'one.csv') });
    companyName = 'Acme Holdings';
    const summary = await enrich({ ...options, output: path.join(dir, 'two.csv'), refresh: true, changes: path.join(dir, 'changes.csv') });
    expect(summary.changed).toEqual({ compared: 2, rows: 2, fields: { company_name: 2 } });
    const lines = readCsvObjects(path.join(dir, 'changes.csv')).map(({ row, key, field, before, after }) => ({ row, key, field, before, after }));
    expect(lines).toEqual([
      { row: '1', key: 'acme.com', field: 'company_name', before: 'Acme Inc', after: 'Acme Holdings' },
      { row: '2', key: 'acme.com', field: 'company_name', before: 'Acme Inc', after: 'Acme Holdings' },
    ]);
    expect(readCsvObjects(path.join(dir, 'two.csv')).map((row) => row.lead_changed)).toEqual(['company_name', 'company_name']);
  });
});

describe('--with mx and whois looked up again', () => {
  it("a domain's mail moved shows in mx_primary, its registrar in whois_registrar, the person unchanged", async () => {
    let [exchange, registrar] = ['mx1.acme.com', 'Old Registrar'];
    const api = await accountOnlyServer((req) => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname.endsWith('/domain/resolve/mx')) {
        const records = exchange === '' ? [] : [{ exchange, priority: 10 }];
        return { status: 200, body: JSON.stringify({ status: 'success', data: { domain: 'acme.com', mx_records: records } }) };
      }
      if (url.pathname.endsWith('/domain/resolve/whois')) {
        return {
          status: 200,
          body: JSON.stringify({ status: 'success', data: { whoisRecord: { domain: { domain: 'acme.com' }, registrar: { name: registrar } } } }),
        };
      }
      const email = url.searchParams.get('email_address');
      return { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: email, lead: { name: 'Ann', title: 'CTO' } } }) };
    });
    closers.push(api.close);
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
    const options = { input, baseUrl: api.baseUrl, token: 'token-0123456789', store: path.join(dir, 'store.sqlite'), with: ['mx' as const, 'whois' as const] };
    await enrich({ ...options, output: path.join(dir, 'one.csv') });
    [exchange, registrar] = ['mx2.acme.com', 'New Registrar'];
    const summary = await enrich({ ...options, output: path.join(dir, 'two.csv'), refresh: true, changes: path.join(dir, 'changes.csv') });
    const lines = readCsvObjects(path.join(dir, 'changes.csv')).map(({ key, field, before, after }) => ({ key, field, before, after }));
    expect(lines).toEqual(
      expect.arrayContaining([
        { key: 'acme.com', field: 'mx_primary', before: 'mx1.acme.com', after: 'mx2.acme.com' },
        { key: 'acme.com', field: 'mx_records', before: '10 mx1.acme.com', after: '10 mx2.acme.com' },
        { key: 'acme.com', field: 'whois_registrar', before: 'Old Registrar', after: 'New Registrar' },
      ]),
    );
    expect(lines).toHaveLength(3);
    expect(lines.every((line) => line.key === 'acme.com')).toBe(true);
    expect(summary.changed).toEqual({ compared: 1, rows: 1, fields: { mx_primary: 1, mx_records: 1, whois_registrar: 1 } });
    // The domain no longer takes mail: MX has no status field, so its columns alone say it.
    exchange = '';
    await enrich({ ...options, output: path.join(dir, 'three.csv'), refresh: true, changes: path.join(dir, 'changes3.csv') });
    expect(readCsvObjects(path.join(dir, 'changes3.csv')).map(({ field, before, after }) => ({ field, before, after }))).toEqual([
      { field: 'mx_primary', before: 'mx2.acme.com', after: '' },
      { field: 'mx_records', before: '10 mx2.acme.com', after: '' },
    ]);
  });

  it("only the domain's MX answer stale: its change alone, the person's columns (from the store) unchanged", async () => {
    let exchange = 'mx1.acme.com';
    const api = await accountOnlyServer((req) => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname.endsWith('/domain/resolve/mx'))
        return { status: 200, body: JSON.stringify({ status: 'success', data: { domain: 'acme.com', mx_records: [{ exchange, priority: 10 }] } }) };
      const email = url.searchParams.get('email_address');
      return { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: email, lead: { name: 'Ann', title: 'CTO' } } }) };
    });
    closers.push(api.close);
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
    const store = path.join(dir, 'store.sqlite');
    const options = { input, baseUrl: api.baseUrl, token: 'token-0123456789', store, with: ['mx' as const] };
    await enrich({ ...options, output: path.join(dir, 'one.csv') });
    const db = openSqliteFile(store);
    db.run("UPDATE results SET fetched_at = fetched_at - ? WHERE key = 'acme.com'", 40 * DAY);
    db.close();
    exchange = 'mx2.acme.com';
    await enrich({ ...options, output: path.join(dir, 'two.csv'), maxAge: '30d', changes: path.join(dir, 'changes.csv') });
    const [row] = readCsvObjects(path.join(dir, 'two.csv'));
    expect(row).toMatchObject({ lead_billing: 'cached', lead_name: 'Ann', mx_primary: 'mx2.acme.com' });
    expect(readCsvObjects(path.join(dir, 'changes.csv')).map(({ key, field }) => `${key} ${field}`)).toEqual(['acme.com mx_primary', 'acme.com mx_records']);
  });
});

describe('lead_changed and --fields', () => {
  it('is always written last when --changes is given, wherever --fields names it, and is no field of a run without it', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(3).map((e) => [e])]);
    const options = { input, baseUrl: s.baseUrl, token: s.token, store: path.join(dir, 'store.sqlite') };
    await enrich({ ...options, output: path.join(dir, 'out.csv'), fields: 'lead_changed,lead_name', changes: path.join(dir, 'changes.csv') });
    expect(fs.readFileSync(path.join(dir, 'out.csv'), 'utf8').split('\n')[0]).toBe('email,lead_status,lead_name,lead_changed');
    // In a program's words: the option as enrich() takes it.
    await expect(enrich({ ...options, output: path.join(dir, 'two.csv'), fields: 'lead_name,lead_changed' })).rejects.toThrow(
      "Invalid option fields: this run adds no column named 'lead_changed': add changes: a file;",
    );
  });
});

describe('the --changes file', () => {
  it('appears only complete: a run that fails leaves neither it nor a part of it', async () => {
    const s = await sandbox({ drift: 0.3, latencyMs: [30, 30] });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(60).map((e) => [e])]);
    const options = { input, baseUrl: s.baseUrl, token: s.token, store: path.join(dir, 'store.sqlite') };
    await enrich({ ...options, output: path.join(dir, 'one.csv') });
    s.nextDay();
    const failing = enrich({
      ...options,
      output: path.join(dir, 'two.csv'),
      refresh: true,
      changes: path.join(dir, 'changes.csv'),
      concurrency: 2,
      tuning: { progressIntervalMs: 5 },
      onProgress: (p) => (p.rowsDone >= 4 ? s.revokeToken() : undefined),
    });
    await expect(failing).rejects.toMatchObject({ code: 'unauthorized' });
    expect(fs.readdirSync(dir).filter((name) => name.includes('changes'))).toEqual([]);
  });
});

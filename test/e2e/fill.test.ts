// --fill, --overwrite and --only-missing (cli-contract, "Filling the input's own columns"): a CRM
// export's own blank cells filled from the answer, rows already complete never requested.
// The command line against a sandbox whose requests are counted; the library through enrich()
// and enrichRows().
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrich, type EnrichOptions } from '../../src/run/enrich.js';
import { enrichRows } from '../../src/run/enrich-rows.js';
import { planRun } from '../../src/run/dry-run.js';
import { normalizeSandboxKey, sandboxAnswer } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { readCsvObjects, writeCsv } from '../helpers/files.js';
import { accountOnlyServer } from '../helpers/servers.js';

let s: Sandbox;
let env: Record<string, string>;
beforeAll(async () => {
  s = await startSandbox({ port: 0, rpm: 60_000, notFoundRate: 0 });
  env = { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: s.token };
});
afterAll(() => s.close());

/** The sandbox's own person for an email: what a filled cell must hold. */
function person(email: string): { title: string; company_name: string } {
  const answer = sandboxAnswer('lookup_email', normalizeSandboxKey('lookup_email', email));
  if (answer.kind !== 'found') throw new Error(`${email} is not found in the sandbox`);
  return answer.data.lead as { title: string; company_name: string };
}

/** A HubSpot-style contacts export: some rows hold both Title and Company, some one, some neither. */
const CRM: string[][] = [
  ['Record ID', 'First Name', 'Last Name', 'Email', 'Title', 'Company', 'Phone Number'],
  ['501', 'Ann', 'Lee', 'ann.lee@acme-tools.com', '', '', '+1 555 0101'],
  ['502', 'Bob', 'Stone', 'bob.stone@globex.io', 'Head of IT', 'Globex', ''],
  ['503', 'Carl', 'Ng', 'carl.notfound@initech.com', '', '', ''],
  ['504', 'Dee', 'Park', 'dee.park@umbrella.org', 'VP Sales', '', ''],
  ['505', 'Eve', 'Moss', 'eve.moss@hooli.dev', '   ', 'Hooli', ''],
  ['506', 'Fay', 'Wu', 'fay.wu@stark.co', 'CFO', 'Stark', ''],
];
const lookups = () => s.stats.byOperation.lookup_email!;

describe('--fill on a CRM export', () => {
  it('fills the blank cells of found rows, keeps the filled ones, never requests complete rows; header = input + lead_status, exit 0', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'crm.csv'), CRM);
    const output = path.join(dir, 'out.csv');
    const before = lookups();
    const r = await runCli(['enrich', input, '-o', output, '--fill', 'Title=lead_title,Company=lead_company_name'], { env });
    expect(r.code, r.stderr).toBe(0);
    // Rows 502 and 506 hold both: never sent. The other four are.
    expect(lookups() - before).toBe(4);
    const rows = readCsvObjects(output);
    expect(Object.keys(rows[0]!)).toEqual([...CRM[0]!, 'lead_status']);
    const [ann, bob, carl, dee, eve, fay] = rows;
    expect(ann).toMatchObject({
      Title: person('ann.lee@acme-tools.com').title,
      Company: person('ann.lee@acme-tools.com').company_name,
      lead_status: 'found',
      'Phone Number': '+1 555 0101',
    });
    expect(bob).toMatchObject({ Title: 'Head of IT', Company: 'Globex', lead_status: 'skipped' });
    expect(carl).toMatchObject({ Title: '', Company: '', lead_status: 'not_found' });
    expect(dee).toMatchObject({ Title: 'VP Sales', Company: person('dee.park@umbrella.org').company_name, lead_status: 'found' });
    // Only spaces is blank.
    expect(eve).toMatchObject({ Title: person('eve.moss@hooli.dev').title, Company: 'Hooli', lead_status: 'found' });
    expect(fay).toMatchObject({ Title: 'CFO', Company: 'Stark', lead_status: 'skipped' });
    // The sidecar lists what a person or a re-run must act on: complete rows are done, only
    // counted in the summary (docs/cli-contract.md, "The error sidecar").
    expect(readCsvObjects(path.join(dir, 'out.errors.csv'))).toEqual([]);
    expect(r.stderr).toMatch(/Skipped \(not errors\): complete 2/);
    expect(r.stderr).toMatch(/Fill rate of the 3 rows found: lead_title 100 %, lead_company_name 100 %; cells filled: Title 2, Company 2/);
  });

  it('--overwrite replaces the cells of found rows (and looks up every row); a row not found keeps its cells', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'crm.csv'), [...CRM, ['507', 'Gil', 'Roy', 'gil.notfound@x-corp.com', 'Owner', 'X Corp', '']]);
    const output = path.join(dir, 'out.csv');
    const before = lookups();
    const r = await runCli(['enrich', input, '-o', output, '--fill', 'Title=lead_title,Company=lead_company_name', '--overwrite'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(lookups() - before).toBe(7);
    const rows = readCsvObjects(output);
    expect(rows[1]).toMatchObject({ Title: person('bob.stone@globex.io').title, Company: person('bob.stone@globex.io').company_name, lead_status: 'found' });
    expect(rows[5]).toMatchObject({ Title: person('fay.wu@stark.co').title, lead_status: 'found' });
    expect(rows[6]).toMatchObject({ Title: 'Owner', Company: 'X Corp', lead_status: 'not_found' });
  });

  it('a misspelt column or field ends with exit 1 and the right suggestion, before any request', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'crm.csv'), CRM);
    const before = s.stats.requests;
    const column = await runCli(['enrich', input, '--fill', 'Titel=lead_title'], { env });
    expect(column.code).toBe(1);
    expect(column.stderr).toMatch(/Invalid option --fill: the input has no column named 'Titel' \(did you mean Title\?\)/);
    const field = await runCli(['enrich', input, '--fill', 'Title=lead_titel'], { env });
    expect(field.code).toBe(1);
    expect(field.stderr).toMatch(/Invalid option --fill: this run adds no column named 'lead_titel' \(did you mean lead_title\?\)/);
    // The field named as the column is called, without lead_: the added column is suggested.
    const bare = await runCli(['enrich', input, '--fill', 'Title=title'], { env });
    expect(bare.code).toBe(1);
    expect(bare.stderr).toMatch(/no column named 'title' \(did you mean lead_title\?\)/);
    const extra = await runCli(['enrich', input, '--fill', 'Company=company_name'], { env });
    expect(extra.code).toBe(1);
    expect(extra.stderr).toMatch(/no column named 'company_name': add --with company/);
    const missing = await runCli(['enrich', input, '--only-missing', 'Compnay'], { env });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/Invalid option --only-missing: the input has no column named 'Compnay' \(did you mean Company\?\)/);
    for (const r of [column, field, bare, extra, missing]) expect(r.stderr.trim().split('\n')).toHaveLength(1);
    // Not even the account was read.
    expect(s.stats.requests).toBe(before);
    expect(fs.readdirSync(dir)).toEqual(['crm.csv']);
  });

  it('--overwrite alone, or a pair without "=", is refused by the option rules', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'crm.csv'), CRM);
    const alone = await runCli(['enrich', input, '--overwrite'], { env });
    expect(alone.code).toBe(1);
    expect(alone.stderr).toMatch(/Invalid option --overwrite: it replaces the cells --fill fills; give --fill too/);
    const pair = await runCli(['enrich', input, '--fill', 'Title'], { env });
    expect(pair.code).toBe(1);
    expect(pair.stderr).toMatch(/Invalid option --fill: must be COLUMN=FIELD pairs such as Title=lead_title,Company=lead_company_name, got 'Title'/);
  });
});

describe('--only-missing', () => {
  it('skips the rows whose listed cells hold values, with no request; the others get the usual columns', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'crm.csv'), CRM);
    const output = path.join(dir, 'out.csv');
    const before = lookups();
    const r = await runCli(['enrich', input, '-o', output, '--only-missing', 'Title', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    // Bob, Dee and Fay hold a Title.
    expect(lookups() - before).toBe(3);
    const rows = readCsvObjects(output);
    expect(Object.keys(rows[0]!)).toContain('lead_title');
    expect(Object.keys(rows[0]!)).toContain('lead_billing');
    expect(rows.map((row) => row.lead_status)).toEqual(['found', 'skipped', 'not_found', 'skipped', 'found', 'skipped']);
    // The input's cells are never changed without --fill.
    expect(rows[0]).toMatchObject({ Title: '', lead_title: person('ann.lee@acme-tools.com').title });
    // Complete rows are not in the sidecar (nothing to act on); the summary counts them.
    expect(readCsvObjects(path.join(dir, 'out.errors.csv'))).toEqual([]);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: { skipped: 3 }, skipReasons: { complete: 3 } });
  });

  it('the dry run counts complete rows apart, and the lookups and credits they save', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'crm.csv'), CRM);
    const r = await runCli(
      ['enrich', input, '--dry-run', '--json', '--fill', 'Title=lead_title,Company=lead_company_name', '--store', path.join(dir, 's.sqlite')],
      { env },
    );
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan).toMatchObject({ rows: 6, completeRows: 2, lookupsToMake: 4, lookupsSaved: 2, creditsSaved: 8 });
    const text = await runCli(['enrich', input, '--dry-run', '--only-missing', 'Title', '--store', path.join(dir, 's.sqlite')], { env });
    expect(text.stdout).toMatch(/Complete rows \(their cells hold values: skipped, no request\): 3, saving at most 3 lookups \(12 credits\)/);
  });

  it("a complete row's key that another row needs saves nothing", async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'crm.csv'), [
      ['Email', 'Title'],
      ['same@acme-tools.com', 'CTO'],
      ['same@acme-tools.com', ''],
      ['other@acme-tools.com', 'CEO'],
    ]);
    const plan = await planRun({ input, baseUrl: s.baseUrl, token: s.token, store: ':memory:', onlyMissing: 'Title' });
    expect(plan).toMatchObject({ rows: 3, completeRows: 2, lookupsToMake: 1, lookupsSaved: 1 });
  });
});

const run = (options: Partial<EnrichOptions> & { input: string }) => enrich({ baseUrl: s.baseUrl, token: s.token, store: ':memory:', ...options });

describe('--fill with the rest of the run', () => {
  it('a waterfall and --with company: several fields may fill one column, the first with a value wins', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'crm.csv'), [
      ['Email', 'LinkedIn', 'Company', 'Mail server'],
      ['ana.notfound@corp-one.com', 'https://www.linkedin.com/in/ana-ortiz-4821', '', ''],
      ['ben@corp-two.com', '', '', ''],
    ]);
    const output = path.join(dir, 'out.csv');
    const summary = await run({
      input,
      output,
      by: 'email,url',
      column: ['Email', 'LinkedIn'],
      with: ['mx', 'company'],
      fill: 'Company=lead_company_name,Company=company_name,Mail server=mx_primary',
    });
    const rows = readCsvObjects(output);
    expect(Object.keys(rows[0]!)).toEqual(['Email', 'LinkedIn', 'Company', 'Mail server', 'lead_status']);
    // Ana: found by URL, her lead names a company; Ben: found by email.
    expect(rows.map((row) => row.lead_status)).toEqual(['found', 'found']);
    expect(rows[1]!.Company).toBe(person('ben@corp-two.com').company_name);
    expect(rows[0]!.Company).not.toBe('');
    expect(rows.every((row) => /\./.test(row['Mail server']!))).toBe(true);
    expect(summary.filled).toEqual({ Company: 2, 'Mail server': 2 });
    expect(summary.answeredBy).toEqual({ email: 2, url: 1 });
  });

  it('a re-run on the same store pays nothing and fills the same cells', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'crm.csv'), CRM);
    const store = path.join(dir, 's.sqlite');
    const options = { input, store, fill: { Title: 'lead_title', Company: 'lead_company_name' } };
    await run({ ...options, output: path.join(dir, 'first.csv') });
    const before = s.stats.requests;
    const again = await run({ ...options, output: path.join(dir, 'again.csv') });
    expect(again.requests).toBe(0);
    expect(again.credits.spent).toBe(0);
    expect(again.billing.cached).toBe(4);
    // Not even the account reads: every answer is stored, so the API is not asked at all.
    expect(s.stats.requests - before).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'again.csv'), 'utf8')).toBe(fs.readFileSync(path.join(dir, 'first.csv'), 'utf8'));
  });

  it('JSON Lines: `input` holds the filled cells and `filled` names them', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'crm.csv'), CRM);
    const output = path.join(dir, 'out.jsonl');
    await run({ input, output, fill: 'Title=lead_title' });
    const lines = fs
      .readFileSync(output, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines[0].input.Title).toBe(person('ann.lee@acme-tools.com').title);
    expect(lines[0].filled).toEqual({ Title: person('ann.lee@acme-tools.com').title });
    // A complete row is no error: its line says the reason, and has no `error`.
    expect(lines[1]).toMatchObject({ lead_status: 'skipped', reason: { code: 'complete' }, input: { Title: 'Head of IT' } });
    expect(lines[1].error).toBeUndefined();
    expect(lines[1].filled).toBeUndefined();
  });

  it('with --prefix, a field is taken by its own name or by the name the run would write', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'crm.csv'), CRM.slice(0, 2));
    for (const field of ['lead_title', 'v2_lead_title']) {
      const output = path.join(dir, `${field}.csv`);
      await run({ input, output, prefix: 'v2_', fill: `Title=${field}`, fields: 'lead_name' });
      const [row] = readCsvObjects(output);
      expect(Object.keys(row!).slice(-2)).toEqual(['v2_lead_status', 'v2_lead_name']);
      expect(row!.Title).toBe(person('ann.lee@acme-tools.com').title);
    }
  });

  it('a filled cell that would run as a formula is escaped; the sidecar shows the cells as read', async () => {
    const api = await accountOnlyServer((req) => {
      if (req.url!.includes('/reverse_lookup/email')) {
        return {
          status: 200,
          body: JSON.stringify({
            status: 'success',
            data: { email_address: 'x', lead: { name: 'Mal', title: '=HYPERLINK("http://evil.example","x")', company_name: '@SUM(A1)' } },
          }),
        };
      }
      // --with mx fails: the row is an error, its own lead found all the same.
      return { status: 500, body: '' };
    });
    try {
      const dir = tempDir();
      const input = writeCsv(path.join(dir, 'crm.csv'), [
        ['Email', 'Title', 'Company'],
        ['mal@evil.example', '', ''],
      ]);
      const output = path.join(dir, 'out.csv');
      await enrich({
        input,
        output,
        baseUrl: api.baseUrl,
        token: 't',
        store: ':memory:',
        retries: 0,
        with: ['mx'],
        fill: 'Title=lead_title,Company=lead_company_name',
      });
      const [row] = readCsvObjects(output);
      expect(row).toMatchObject({ Title: `'=HYPERLINK("http://evil.example","x")`, Company: `'@SUM(A1)`, lead_status: 'error' });
      const [side] = readCsvObjects(path.join(dir, 'out.errors.csv'));
      expect(side).toMatchObject({ Title: '', Company: '', error_code: 'server_error' });
    } finally {
      api.close();
    }
  });
});

describe('enrichRows with fill', () => {
  it('results say what was filled; complete rows are skipped with complete and never requested', async () => {
    const header = CRM[0]!;
    const rows = CRM.slice(1).map((cells) => Object.fromEntries(header.map((name, i) => [name, cells[i]!])));
    const before = lookups();
    const results = [];
    for await (const result of enrichRows(rows, {
      baseUrl: s.baseUrl,
      token: s.token,
      store: ':memory:',
      fill: { Title: 'lead_title', Company: 'lead_company_name' },
    }))
      results.push(result);
    expect(lookups() - before).toBe(4);
    const ann = person('ann.lee@acme-tools.com');
    expect(results[0]).toMatchObject({ row: 1, status: 'found', filled: { Title: ann.title, Company: ann.company_name }, billing: 'charged', source: 'email' });
    // The row as given, unchanged; the lead as the API sent it.
    expect(results[0]!.input).toBe(rows[0]);
    expect(results[0]!.lead).toMatchObject({ title: ann.title });
    expect(results[1]).toMatchObject({ status: 'skipped', filled: undefined, billing: 'none' });
    expect(results[1]!.error?.code).toBe('complete');
    expect(results[2]).toMatchObject({ status: 'not_found', filled: undefined });
    expect(results[3]!.filled).toEqual({ Company: person('dee.park@umbrella.org').company_name });
  });
});

describe('--fill with --changes', () => {
  it('Title filled Manager, then Director: listed under Title, counted, named in lead_changed; the same with --overwrite', async () => {
    let title = 'Manager';
    const api = await accountOnlyServer((req) => {
      const email = new URL(req.url!, 'http://x').searchParams.get('email_address');
      return { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: email, lead: { name: 'Ann', title } } }) };
    });
    try {
      const dir = tempDir();
      const file = (name: string) => path.join(dir, name);
      const apiEnv = { LEAD_API_BASE_URL: api.baseUrl, LEAD_API_TOKEN: 'token-0123456789', LEAD_ENRICH_STORE: file('store.sqlite') };
      writeCsv(file('in.csv'), [
        ['Email', 'Title'],
        ['ann@acme.com', ''],
      ]);
      expect((await runCli(['enrich', file('in.csv'), '-o', file('one.csv'), '--fill', 'Title=lead_title'], { env: apiEnv })).code).toBe(0);
      title = 'Director';
      const r = await runCli(
        ['enrich', file('in.csv'), '-o', file('two.csv'), '--fill', 'Title=lead_title', '--refresh', '--changes', file('ch.csv'), '--json'],
        { env: apiEnv },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(readCsvObjects(file('ch.csv')).map(({ row, key, field, before, after }) => [row, key, field, before, after])).toEqual([
        ['1', 'ann@acme.com', 'Title', 'Manager', 'Director'],
      ]);
      expect(JSON.parse(r.stdout).changed).toEqual({ compared: 1, rows: 1, fields: { Title: 1 } });
      expect(readCsvObjects(file('two.csv'))[0]).toEqual({ Email: 'ann@acme.com', Title: 'Director', lead_status: 'found', lead_changed: 'Title' });
      // The CRM now holds Director in Title: --overwrite looks the row up again and compares the cell as written.
      writeCsv(file('crm.csv'), [
        ['Email', 'Title'],
        ['ann@acme.com', 'Director'],
      ]);
      title = 'CEO';
      const o = await runCli(
        ['enrich', file('crm.csv'), '-o', file('three.csv'), '--fill', 'Title=lead_title', '--overwrite', '--refresh', '--changes', file('ch3.csv')],
        { env: apiEnv },
      );
      expect(o.code, o.stderr).toBe(0);
      expect(readCsvObjects(file('ch3.csv')).map(({ field, before, after }) => [field, before, after])).toEqual([['Title', 'Director', 'CEO']]);
    } finally {
      api.close();
    }
  });
});

// Waterfall lookups (cli-contract.md, "Waterfall"): `--by email,url` tries each row's kinds in
// order; an empty or malformed cell is passed over with no request; not found passes on; the first
// found ends the row. Asserted on the server side: which requests were and were not sent.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planRun } from '../../src/run/dry-run.js';
import { enrich, type EnrichOptions } from '../../src/run/enrich.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';
import { makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';

const sandbox = sandboxesPerTest({ notFoundRate: 0 });
const run = (s: Sandbox, options: Partial<EnrichOptions> & { input: string }) => enrich({ baseUrl: s.baseUrl, token: s.token, ...options });
const sent = (s: Sandbox, op: string) => s.stats.byOperation[op] ?? 0;

const HEADER = ['Name', 'Email', 'LinkedIn'];
const ROWS = [
  ['found by email', 'ann@acme.com', 'https://www.linkedin.com/in/ann-one'],
  ['email not found, url found', 'bob@notfound-inc.com', 'https://www.linkedin.com/in/bob-two'],
  ['no email: url only', '', 'https://www.linkedin.com/in/cy-three'],
  ['malformed email: url only', 'dee@', 'https://www.linkedin.com/in/dee-four'],
  ['both not found', 'eve@notfound-co.com', 'https://www.linkedin.com/in/notfound-eve'],
  ['no key at all', '', ''],
  ['malformed both', 'fay@', 'not a url at all'],
];

describe('waterfall --by email,url', () => {
  it('sends only the requests the contract allows, and names the kind that answered', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [HEADER, ...ROWS]);
    const summary = await run(s, { input, by: 'email,url', store: path.join(dir, 's.sqlite') });
    // Email: rows 1, 2 and 5 have a well-formed email. URL: rows 2, 3, 4 and 5, after their email
    // (if any) found nothing. Row 1's URL is never sent: its email was found.
    expect(sent(s, 'lookup_email')).toBe(3);
    expect(sent(s, 'lookup_url')).toBe(4);
    const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
    expect(rows.map((r) => [r.lead_status, r.lead_source])).toEqual([
      ['found', 'email'],
      ['found', 'url'],
      ['found', 'url'],
      ['found', 'url'],
      ['not_found', 'url'],
      ['skipped', ''],
      ['error', ''],
    ]);
    expect(summary.foundBy).toEqual({ email: 1, url: 3 });
    expect(summary.errorCodes).toEqual({ no_key: 1, invalid_input: 1 });
    expect(summary.lookup.waterfall).toEqual([
      { kind: 'email', column: 'Email' },
      { kind: 'url', column: 'LinkedIn' },
    ]);
  });

  it('tries the kinds in the order given: --by url,email sends the URL first', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [HEADER, ...ROWS.slice(0, 2)]);
    await run(s, { input, by: ['url', 'email'], store: ':memory:' });
    expect(sent(s, 'lookup_url')).toBe(2);
    expect(sent(s, 'lookup_email')).toBe(0);
  });

  it('takes --column once per kind, in the order of --by', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['Work', 'Home', 'Profile'],
      ['x@notfound-a.com', 'y@acme.com', ''],
    ]);
    const summary = await run(s, { input, by: 'email,email'.replace(',email', ',url'), column: ['Work', 'Profile'], store: ':memory:' });
    expect(summary.lookup.waterfall).toEqual([
      { kind: 'email', column: 'Work' },
      { kind: 'url', column: 'Profile' },
    ]);
    expect(summary.status.not_found).toBe(1);
  });

  it('pays once per key, and a re-run pays nothing: every step of the chain comes from the store', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [HEADER, ...ROWS, ...ROWS]);
    const store = path.join(dir, 's.sqlite');
    await run(s, { input, by: 'email,url', store });
    expect(sent(s, 'lookup_email') + sent(s, 'lookup_url')).toBe(7);
    const again = await run(s, { input, by: 'email,url', store, output: path.join(dir, 'again.csv') });
    expect(sent(s, 'lookup_email') + sent(s, 'lookup_url')).toBe(7);
    expect(again.requests).toBe(0);
    expect(again.foundBy).toEqual({ email: 2, url: 6 });
  });

  it('the dry run counts the worst case and the expected case, from the store', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [HEADER, ...ROWS]);
    const store = path.join(dir, 's.sqlite');
    const before = await planRun({ input, by: 'email,url', baseUrl: s.baseUrl, token: s.token, store });
    // Worst: every well-formed key sent (3 emails, 4 URLs; row 1's URL too, since its email might
    // not be found). Expected: one request per row with a key (its first), nothing more.
    expect(before).toMatchObject({ rows: 7, invalidRows: 1, noKeyRows: 1, lookupsToMake: 8, lookupsExpected: 5 });
    expect(before.lookup.order).toEqual([
      { kind: 'email', column: 'Email' },
      { kind: 'url', column: 'LinkedIn' },
    ]);
    await run(s, { input, by: 'email,url', store });
    const after = await planRun({ input, by: 'email,url', baseUrl: s.baseUrl, token: s.token, store });
    // Every key a row reaches is now in the store (row 1's URL is not reached: its email was found).
    expect(after).toMatchObject({ lookupsToMake: 0, lookupsExpected: 0, alreadyKnown: { lookup_email: 3, lookup_url: 4 } });
  });

  it('JSONL lines carry lead_source too', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [HEADER, ...ROWS]);
    const output = path.join(dir, 'out.jsonl');
    await run(s, { input, output, by: 'email,url', store: ':memory:' });
    const lines = fs
      .readFileSync(output, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { lead_source?: string });
    expect(lines.map((l) => l.lead_source)).toEqual(['email', 'url', 'url', 'url', 'url', undefined, undefined]);
  });

  it('refuses a kind named twice, and more --column than kinds', async () => {
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [HEADER, ...ROWS]);
    await expect(enrich({ input, by: 'email,email' })).rejects.toThrow(/email is named twice/);
    await expect(enrich({ input, by: 'email', column: ['Email', 'LinkedIn'], store: ':memory:', baseUrl: 'http://127.0.0.1:9/v2' })).rejects.toThrow(
      /2 columns for 1 lookup kind/,
    );
  });
});

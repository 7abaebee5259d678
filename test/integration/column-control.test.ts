// --prefix, --fields, the clash check, and the billing column of each --with operation
// (cli-contract.md, "Added column names"), through enrich() against the sandbox.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/api/errors.js';
import { enrich, type EnrichOptions } from '../../src/run/enrich.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';

let s: Sandbox;
beforeAll(async () => {
  s = await startSandbox({ port: 0, rpm: 60_000, notFoundRate: 0 });
});
afterAll(() => s.close());

const run = (options: Partial<EnrichOptions> & { input: string }) => enrich({ baseUrl: s.baseUrl, token: s.token, store: ':memory:', ...options });
const header = (file: string) => Object.keys(readCsvObjects(file)[0]!);

describe('column control', () => {
  it('--fields keeps only the columns named, in that order, after lead_status', async () => {
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['email', 'note'],
      ['ann@acme.com', 'x'],
    ]);
    const output = path.join(dir, 'out.csv');
    await run({ input, output, fields: 'lead_title,lead_name' });
    expect(header(output)).toEqual(['email', 'note', 'lead_status', 'lead_title', 'lead_name']);
    expect(readCsvObjects(output)[0]!.lead_name).not.toBe('');
  });

  it('--prefix renames every added column, lead_status and the billing columns too', async () => {
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
    const output = path.join(dir, 'out.csv');
    await run({ input, output, prefix: 'v2_', with: ['mx'], fields: ['lead_name', 'mx_primary', 'mx_billing'] });
    expect(header(output)).toEqual(['email', 'v2_lead_status', 'v2_lead_name', 'v2_mx_primary', 'v2_mx_billing']);
  });

  it('enriching an enriched file again is refused before any request, and works with --prefix', async () => {
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com'], ['bob@acme.com']]);
    const first = path.join(dir, 'first.csv');
    await run({ input, output: first });
    const before = s.stats.requests;
    const error = await run({ input: first, output: path.join(dir, 'again.csv'), with: ['mx'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      /already has a column named 'lead_status', which this run would add again: give prefix: '\w+' \(or another prefix\)$/,
    );
    // Not even the account was read.
    expect(s.stats.requests).toBe(before);
    const again = path.join(dir, 'again.csv');
    await run({ input: first, output: again, with: ['mx'], prefix: 'mx_run_', fields: ['mx_primary'] });
    expect(header(again).slice(-2)).toEqual(['mx_run_lead_status', 'mx_run_mx_primary']);
  });

  it('refuses a --fields name it does not know, suggesting the closest, before any request', async () => {
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
    const before = s.stats.requests;
    await expect(run({ input, fields: 'lead_nmae' })).rejects.toThrow(/no column named 'lead_nmae' \(did you mean lead_name\?\)/);
    await expect(run({ input, fields: 'whois_registrar' })).rejects.toThrow(/'whois_registrar': add 'whois' to with;/);
    expect(s.stats.requests).toBe(before);
  });

  it('bills each --with operation in its own column: the first row of a domain pays, the next is a duplicate', async () => {
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@billcols.com'], ['bob@billcols.com'], ['broken@']]);
    const output = path.join(dir, 'out.csv');
    await run({ input, output, with: ['mx', 'whois'] });
    const rows = readCsvObjects(output);
    expect(header(output).slice(-3)).toEqual(['lead_billing', 'mx_billing', 'whois_billing']);
    expect(rows.map((r) => [r.mx_billing, r.whois_billing])).toEqual([
      ['charged', 'charged'],
      ['duplicate', 'duplicate'],
      ['none', 'none'],
    ]);
  });
});

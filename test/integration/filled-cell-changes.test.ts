// What changed in the cells --fill fills (docs/cli-contract.md, "What changed since the last
// answer"): a filled cell is compared as it is written, like an added column, and named by its input
// column. With --fill the output has no added column of the answer's, so before this a new title
// written into Title changed nothing that --changes, lead_changed or the summary said.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { enrich } from '../../src/run/enrich.js';
import { makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';
import { accountOnlyServer } from '../helpers/servers.js';

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A service whose people have the titles in `titles` (an email not in it: not found). */
async function serviceOf(titles: Map<string, string | undefined>) {
  const api = await accountOnlyServer((req) => {
    const email = new URL(req.url!, 'http://x').searchParams.get('email_address')!;
    const title = titles.get(email);
    const lead = titles.has(email) ? { name: 'Ann', ...(title === undefined ? {} : { title }), company_name: 'Acme' } : {};
    return { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: email, lead } }) };
  });
  closers.push(api.close);
  return api;
}

const lines = (file: string) => readCsvObjects(file).map(({ row, key, field, before, after }) => ({ row, key, field, before, after }));

describe('--fill: a filled cell that changed', () => {
  it('is listed under its input column, counted, and named in lead_changed (the cell blank in the input)', async () => {
    const titles = new Map<string, string | undefined>([
      ['ann@acme.com', 'Manager'],
      ['bob@acme.com', 'Engineer'],
    ]);
    const api = await serviceOf(titles);
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['email', 'Title'],
      ['ann@acme.com', ''],
      ['bob@acme.com', ' '],
    ]);
    const options = { input, baseUrl: api.baseUrl, token: 'token-0123456789', store: path.join(dir, 'store.sqlite'), fill: 'Title=lead_title' };
    await enrich({ ...options, output: path.join(dir, 'one.csv') });
    titles.set('ann@acme.com', 'Director');
    const summary = await enrich({ ...options, output: path.join(dir, 'two.csv'), refresh: true, changes: path.join(dir, 'changes.csv') });
    expect(lines(path.join(dir, 'changes.csv'))).toEqual([{ row: '1', key: 'ann@acme.com', field: 'Title', before: 'Manager', after: 'Director' }]);
    expect(summary.changed).toEqual({ compared: 2, rows: 1, fields: { Title: 1 } });
    const written = readCsvObjects(path.join(dir, 'two.csv'));
    expect(Object.keys(written[0]!)).toEqual(['email', 'Title', 'lead_status', 'lead_changed']);
    expect(written.map((row) => [row.Title, row.lead_changed])).toEqual([
      ['Director', 'Title'],
      ['Engineer', ''],
    ]);
  });

  it('with --overwrite, a cell the input held: compared as written, from what the answer then filled to what it fills now', async () => {
    const titles = new Map<string, string | undefined>([['ann@acme.com', 'Manager']]);
    const api = await serviceOf(titles);
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['email', 'Title'],
      ['ann@acme.com', 'Manager'],
    ]);
    const options = {
      input,
      baseUrl: api.baseUrl,
      token: 'token-0123456789',
      store: path.join(dir, 'store.sqlite'),
      fill: 'Title=lead_title',
      overwrite: true,
    };
    await enrich({ ...options, output: path.join(dir, 'one.csv') });
    titles.set('ann@acme.com', 'Director');
    await enrich({ ...options, output: path.join(dir, 'two.csv'), refresh: true, changes: path.join(dir, 'changes.csv') });
    expect(lines(path.join(dir, 'changes.csv'))).toEqual([{ row: '1', key: 'ann@acme.com', field: 'Title', before: 'Manager', after: 'Director' }]);
    // The answer no longer has a title: the cell keeps what the input held, and that is what is compared.
    titles.set('ann@acme.com', undefined);
    const third = await enrich({ ...options, output: path.join(dir, 'three.csv'), refresh: true, changes: path.join(dir, 'changes3.csv') });
    expect(readCsvObjects(path.join(dir, 'three.csv'))[0]!.Title).toBe('Manager');
    expect(lines(path.join(dir, 'changes3.csv'))).toEqual([{ row: '1', key: 'ann@acme.com', field: 'Title', before: 'Director', after: 'Manager' }]);
    expect(third.changed.fields).toEqual({ Title: 1 });
  });

  it('beside the added column it fills from: both listed, each under its own name; a found person who left: status alone', async () => {
    const titles = new Map<string, string | undefined>([
      ['ann@acme.com', 'Manager'],
      ['bob@acme.com', 'Engineer'],
    ]);
    const api = await serviceOf(titles);
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['email', 'Title'],
      ['ann@acme.com', ''],
      ['bob@acme.com', ''],
    ]);
    const options = {
      input,
      baseUrl: api.baseUrl,
      token: 'token-0123456789',
      store: path.join(dir, 'store.sqlite'),
      fill: 'Title=lead_title',
      fields: 'lead_title',
    };
    await enrich({ ...options, output: path.join(dir, 'one.csv') });
    titles.set('ann@acme.com', 'Director');
    titles.delete('bob@acme.com');
    await enrich({ ...options, output: path.join(dir, 'two.csv'), refresh: true, changes: path.join(dir, 'changes.csv') });
    expect(lines(path.join(dir, 'changes.csv'))).toEqual([
      { row: '1', key: 'ann@acme.com', field: 'lead_title', before: 'Manager', after: 'Director' },
      { row: '1', key: 'ann@acme.com', field: 'Title', before: 'Manager', after: 'Director' },
      { row: '2', key: 'bob@acme.com', field: 'status', before: 'found', after: 'not_found' },
    ]);
  });

  it('a row shorter than the header, the answer filling nothing: its missing cell is blank, unchanged, on both sides', async () => {
    const titles = new Map<string, string | undefined>([
      ['ann@acme.com', undefined],
      ['bob@acme.com', 'Engineer'],
    ]);
    const api = await serviceOf(titles);
    const dir = makeTempDir();
    const input = path.join(dir, 'in.csv');
    writeFileSync(input, 'email,Title\nann@acme.com\nbob@acme.com,\n');
    const options = { input, baseUrl: api.baseUrl, token: 'token-0123456789', store: path.join(dir, 'store.sqlite'), fill: 'Title=lead_title' };
    await enrich({ ...options, output: path.join(dir, 'one.csv') });
    titles.set('bob@acme.com', 'Director');
    const summary = await enrich({ ...options, output: path.join(dir, 'two.csv'), refresh: true, changes: path.join(dir, 'changes.csv') });
    expect(lines(path.join(dir, 'changes.csv'))).toEqual([{ row: '2', key: 'bob@acme.com', field: 'Title', before: 'Engineer', after: 'Director' }]);
    expect(summary.changed).toEqual({ compared: 2, rows: 1, fields: { Title: 1 } });
    expect(readCsvObjects(path.join(dir, 'two.csv')).map((row) => [row.Title, row.lead_changed])).toEqual([
      ['', ''],
      ['Director', 'Title'],
    ]);
  });

  it('found by a run without --changes: listed by the next run with --fill and --changes, as it fills the cell', async () => {
    const titles = new Map<string, string | undefined>([['ann@acme.com', 'Manager']]);
    const api = await serviceOf(titles);
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['email', 'Title'],
      ['ann@acme.com', ''],
    ]);
    const options = { input, baseUrl: api.baseUrl, token: 'token-0123456789', store: path.join(dir, 'store.sqlite'), fill: 'Title=lead_title' };
    await enrich({ ...options, output: path.join(dir, 'one.csv') });
    titles.set('ann@acme.com', 'Director');
    await enrich({ ...options, output: path.join(dir, 'two.csv'), refresh: true });
    const summary = await enrich({ ...options, output: path.join(dir, 'three.csv'), changes: path.join(dir, 'changes.csv') });
    expect(lines(path.join(dir, 'changes.csv'))).toEqual([{ row: '1', key: 'ann@acme.com', field: 'Title', before: 'Manager', after: 'Director' }]);
    expect(summary.carriedOver).toEqual({ keys: 1, lines: 1, keysNotInFile: 0 });
  });

  it('of a key no longer in the file: listed after the rows, with an empty row, as its answer alone fills the cell', async () => {
    const titles = new Map<string, string | undefined>([
      ['ann@acme.com', 'Manager'],
      ['bob@acme.com', 'Engineer'],
    ]);
    const api = await serviceOf(titles);
    const dir = makeTempDir();
    const both = writeCsv(path.join(dir, 'both.csv'), [
      ['email', 'Title'],
      ['ann@acme.com', ''],
      ['bob@acme.com', ''],
    ]);
    const options = { baseUrl: api.baseUrl, token: 'token-0123456789', store: path.join(dir, 'store.sqlite'), fill: 'Title=lead_title' };
    await enrich({ ...options, input: both, output: path.join(dir, 'one.csv') });
    titles.set('ann@acme.com', 'Director');
    await enrich({ ...options, input: both, output: path.join(dir, 'two.csv'), refresh: true });
    const bob = writeCsv(path.join(dir, 'bob.csv'), [
      ['email', 'Title'],
      ['bob@acme.com', ''],
    ]);
    const summary = await enrich({ ...options, input: bob, output: path.join(dir, 'three.csv'), changes: path.join(dir, 'changes.csv') });
    expect(lines(path.join(dir, 'changes.csv'))).toEqual([{ row: '', key: 'ann@acme.com', field: 'Title', before: 'Manager', after: 'Director' }]);
    expect(summary.carriedOver).toEqual({ keys: 1, lines: 1, keysNotInFile: 1 });
  });
});

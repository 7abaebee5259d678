// What changed since the last answer (docs/cli-contract.md, "What changed since the last
// answer"), through the command line as a nightly job runs it: a file enriched once, then checked
// again against a sandbox where 30 % of the people changed jobs (--refresh, or --max-age making
// every answer stale). What changed is worked out here from the two enriched outputs (and, apart,
// from the sandbox's own rules), and held against the --changes file, the lead_changed column,
// the summary and --json, and `store show`.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxAnswer } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CLI_PATH, runCli, spawnCli, tempDir } from '../helpers/cli.js';
import { codeBlocks, readDocument } from '../helpers/docs.js';
import { openSqliteFile } from '../helpers/sqlite.js';
import { emails, readCsvObjects, writeCsv } from '../helpers/files.js';
import { accountOnlyServer } from '../helpers/servers.js';
import { hangBound, run } from '../helpers/processes.js';
import { readByExceljs, zipPart } from '../helpers/workbook-read.js';
import { lookupsSeen, sigkill, until } from './reliability/support.js';

/** The output's columns that hold what an answer says (not how the run went). */
const ANSWER_COLUMN = (name: string) => name.startsWith('lead_') && !['lead_status', 'lead_billing', 'lead_changed'].includes(name);
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The changes between two enriched outputs of the same file, row by row, as the contract words them. */
function expectedChanges(before: Array<Record<string, string>>, after: Array<Record<string, string>>) {
  return after.flatMap((now, i) => {
    const then = before[i]!;
    if (then.lead_status !== now.lead_status)
      return [{ row: String(i + 1), key: now.email!, field: 'status', before: then.lead_status!, after: now.lead_status! }];
    return Object.keys(now)
      .filter((name) => ANSWER_COLUMN(name) && then[name] !== now[name])
      .map((field) => ({ row: String(i + 1), key: now.email!, field, before: then[field]!, after: now[field]! }));
  });
}

describe('a re-check against a sandbox where 30 % of the people changed jobs', () => {
  const people = emails(80);
  let sandbox: Sandbox;
  let dir: string;
  let env: Record<string, string>;
  const file = (name: string) => path.join(dir, name);
  let times: { first: [number, number]; second: [number, number] };
  let second: Awaited<ReturnType<typeof runCli>>;

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, rpm: 60_000, drift: 0.3 });
    dir = tempDir();
    env = { LEAD_API_BASE_URL: sandbox.baseUrl, LEAD_API_TOKEN: sandbox.token, LEAD_ENRICH_STORE: file('store.sqlite') };
    writeCsv(file('in.csv'), [['email'], ...people.map((e) => [e])]);
    const t0 = Date.now();
    const first = await runCli(['enrich', file('in.csv'), '-o', file('out1.csv')], { env });
    expect(first.code, first.stderr).toBe(0);
    const t1 = Date.now();
    sandbox.nextDay();
    second = await runCli(['enrich', file('in.csv'), '-o', file('out2.csv'), '--refresh', '--changes', file('changes.csv'), '--json'], { env });
    expect(second.code, second.stderr).toBe(0);
    times = { first: [t0, t1], second: [t1, Date.now()] };
  }, hangBound(60_000));
  afterAll(() => sandbox.close());

  it('--changes lists exactly one line per changed field of every changed key, before and after right, dates in order', () => {
    const expected = expectedChanges(readCsvObjects(file('out1.csv')), readCsvObjects(file('out2.csv')));
    const lines = readCsvObjects(file('changes.csv'));
    expect(Object.keys(lines[0]!)).toEqual(['row', 'key', 'field', 'before', 'after', 'before_fetched_at', 'after_fetched_at']);
    expect(lines.map(({ row, key, field, before, after }) => ({ row, key, field, before, after }))).toEqual(expected);
    // The keys that changed are those the sandbox's rules say moved or left at the new epoch.
    const moved = people.filter(
      (key) => JSON.stringify(sandboxAnswer('lookup_email', key, { drift: 0.3, epoch: 1 })) !== JSON.stringify(sandboxAnswer('lookup_email', key)),
    );
    expect(new Set(lines.map((line) => line.key))).toEqual(new Set(moved));
    expect(moved.length).toBeGreaterThan(10);
    for (const line of lines) {
      expect(line.before_fetched_at).toMatch(ISO_UTC);
      expect(line.after_fetched_at).toMatch(ISO_UTC);
      const [then, now] = [Date.parse(line.before_fetched_at!), Date.parse(line.after_fetched_at!)];
      expect(then).toBeGreaterThanOrEqual(times.first[0]);
      expect(then).toBeLessThanOrEqual(times.first[1]);
      expect(now).toBeGreaterThanOrEqual(times.second[0]);
      expect(now).toBeLessThanOrEqual(times.second[1]);
    }
    // A person who moved: a new title and company; one who left: status.
    expect(new Set(lines.map((line) => line.field))).toEqual(
      new Set([
        'lead_title',
        'lead_constructed_title',
        'lead_company_name',
        'lead_company_domain',
        ...(lines.some((l) => l.field === 'status') ? ['status'] : []),
      ]),
    );
  });

  it('lead_changed names the changed fields of those rows, and is empty for the others', () => {
    const expected = expectedChanges(readCsvObjects(file('out1.csv')), readCsvObjects(file('out2.csv')));
    const rows = readCsvObjects(file('out2.csv'));
    expect(Object.keys(rows[0]!).at(-1)).toBe('lead_changed');
    rows.forEach((row, i) => {
      const fields = expected.filter((change) => change.row === String(i + 1)).map((change) => change.field);
      expect(row.lead_changed, row.email).toBe(fields.join(';'));
    });
  });

  it('the summary and --json count the rows changed and each field', () => {
    const expected = expectedChanges(readCsvObjects(file('out1.csv')), readCsvObjects(file('out2.csv')));
    const perField: Record<string, number> = {};
    for (const change of expected) perField[change.field] = (perField[change.field] ?? 0) + 1;
    const rows = new Set(expected.map((change) => change.row)).size;
    const summary = JSON.parse(second.stdout);
    expect(summary.changed).toEqual({ compared: people.length, rows, fields: perField });
    expect(summary.changesFile).toBe(file('changes.csv'));
    expect(second.stderr).toContain(`Changed since the last answer: ${rows} of the ${people.length} rows looked up again (`);
    expect(second.stderr).toContain(`lead_title ${perField.lead_title}`);
    expect(second.stderr).toContain(`Changes: ${file('changes.csv')}`);
  });

  it('store show KEY of a changed key lists both answers, newest first, with their dates', async () => {
    const changed = readCsvObjects(file('changes.csv')).find((line) => line.field === 'lead_title')!;
    const shown = await runCli(['store', 'show', changed.key!], { env });
    expect(shown.code, shown.stderr).toBe(0);
    const answers = JSON.parse(shown.stdout);
    expect(answers).toHaveLength(2);
    expect(answers.map((a: { stored_at: string }) => a.stored_at)).toEqual([changed.after_fetched_at, changed.before_fetched_at]);
    expect(answers.map((a: { replaced_at: string | null }) => a.replaced_at)).toEqual([null, changed.after_fetched_at]);
    expect(answers.map((a: { answer: { lead: { title: string } } }) => a.answer.lead.title)).toEqual([changed.after, changed.before]);
    // export --history holds the same two lines for it.
    const exported = await runCli(['store', 'export', '--history'], { env });
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((line) => line.key === changed.key);
    expect(lines.map((line) => [line.stored_at, line.replaced_at])).toEqual([
      [changed.after_fetched_at, null],
      [changed.before_fetched_at, changed.after_fetched_at],
    ]);
  });

  it('a third run with fresh answers pays nothing and reports no change: lead_changed is empty where nothing was looked up again', async () => {
    const requests = sandbox.stats.requests;
    const third = await runCli(['enrich', file('in.csv'), '-o', file('out3.csv'), '--changes', file('changes3.csv'), '--json'], { env });
    expect(third.code, third.stderr).toBe(0);
    const summary = JSON.parse(third.stdout);
    expect(summary).toMatchObject({ requests: 0, credits: { spent: 0 }, changed: { compared: 0, rows: 0, fields: {} } });
    expect(summary.billing.cached).toBe(people.length);
    expect(sandbox.stats.requests).toBe(requests);
    expect(third.stderr).not.toContain('Changed since the last answer');
    expect(fs.readFileSync(file('changes3.csv'), 'utf8')).toBe('row,key,field,before,after,before_fetched_at,after_fetched_at\n');
    expect(readCsvObjects(file('out3.csv')).map((row) => row.lead_changed)).toEqual(people.map(() => ''));
  });

  it('--max-age making every answer stale, without --changes: the summary still counts the changes, and no column is added', async () => {
    sandbox.nextDay();
    const fourth = await runCli(['enrich', file('in.csv'), '-o', file('out4.csv'), '--max-age', '1ms', '--json'], { env });
    expect(fourth.code, fourth.stderr).toBe(0);
    const expected = expectedChanges(readCsvObjects(file('out3.csv')), readCsvObjects(file('out4.csv')));
    const summary = JSON.parse(fourth.stdout);
    expect(summary.billing.cached).toBe(0);
    expect(summary.changed.compared).toBe(people.length);
    expect(summary.changed.rows).toBe(new Set(expected.map((change) => change.row)).size);
    expect(summary.changed.rows).toBeGreaterThan(0);
    expect(fs.readFileSync(file('out4.csv'), 'utf8').split('\n')[0]).not.toContain('lead_changed');
    expect(fs.existsSync(file('changes.csv'))).toBe(true);
  });

  it('store stats counts the earlier answers, and store prune removes them with the entries', async () => {
    const stats = JSON.parse((await runCli(['store', 'stats', '--json'], { env })).stdout);
    // Two looks again at every key (--refresh, then --max-age): two earlier answers each.
    expect(stats).toMatchObject({ entries: people.length, earlierAnswers: 2 * people.length });
    const pruned = await runCli(['store', 'prune', '--older-than', '0s'], { env });
    expect(pruned.stdout).toBe(
      `Removed ${people.length} entries (and ${2 * people.length} earlier answers) older than 0s from ${file('store.sqlite')}; 0 left.\n`,
    );
    expect(JSON.parse((await runCli(['store', 'stats', '--json'], { env })).stdout)).toMatchObject({ entries: 0, earlierAnswers: 0 });
  });
});

describe('--changes: its file and its column', () => {
  it('escapes formula characters in a new title as the output does', async () => {
    let title = 'Engineer';
    const api = await accountOnlyServer((req) => {
      const email = new URL(req.url!, 'http://x').searchParams.get('email_address');
      return { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: email, lead: { name: 'Ann', title } } }) };
    });
    try {
      const dir = tempDir();
      const env = { LEAD_API_BASE_URL: api.baseUrl, LEAD_API_TOKEN: 'token-0123456789', LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') };
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
      expect((await runCli(['enrich', input, '-o', path.join(dir, 'one.csv')], { env })).code).toBe(0);
      title = '=HYPERLINK("http://evil.example","Boss")';
      const r = await runCli(['enrich', input, '-o', path.join(dir, 'two.csv'), '--refresh', '--changes', path.join(dir, 'changes.csv')], { env });
      expect(r.code, r.stderr).toBe(0);
      const written = readCsvObjects(path.join(dir, 'two.csv'))[0]!;
      expect(written.lead_title).toBe(`'${title}`);
      const [line] = readCsvObjects(path.join(dir, 'changes.csv'));
      expect(line).toMatchObject({ row: '1', key: 'ann@acme.com', field: 'lead_title', before: 'Engineer', after: written.lead_title });
      expect(written.lead_changed).toBe('lead_title');
    } finally {
      api.close();
    }
  });

  it('is written in the format its name says: CSV, .jsonl (and .gz), .xlsx with every cell text; .xlsx.gz refused', async () => {
    // Titles nobody on the team would pick: a formula, a number with a leading zero, a date, a quote and a line break.
    const titles = new Map<string, string>();
    const api = await accountOnlyServer((req) => {
      const email = new URL(req.url!, 'http://x').searchParams.get('email_address')!;
      return {
        status: 200,
        body: JSON.stringify({ status: 'success', data: { email_address: email, lead: { name: 'Ann', title: titles.get(email) ?? 'Engineer' } } }),
      };
    });
    try {
      const dir = tempDir();
      const keys = ['ann@acme.com', 'bob@acme.com', 'cy@acme.com'];
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...keys.map((k) => [k])]);
      const newTitles = ['=HYPERLINK("http://evil.example","Boss")', '007', '2024-01-02'];
      const recordsOf = async (changes: string) => {
        titles.clear();
        const env = {
          LEAD_API_BASE_URL: api.baseUrl,
          LEAD_API_TOKEN: 'token-0123456789',
          LEAD_ENRICH_STORE: path.join(dir, `${path.basename(changes)}.sqlite`),
        };
        expect((await runCli(['enrich', input, '-o', path.join(dir, 'one.csv')], { env })).code).toBe(0);
        keys.forEach((key, i) => {
          titles.set(key, newTitles[i]!);
        });
        const r = await runCli(['enrich', input, '-o', path.join(dir, 'two.csv'), '--refresh', '--changes', changes, '--json'], { env });
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout).changesFile).toBe(changes);
      };
      const csv = path.join(dir, 'c.csv');
      await recordsOf(csv);
      const lines = readCsvObjects(csv);
      expect(lines.map((line) => [line.row, line.key, line.field, line.before, line.after])).toEqual(
        keys.map((key, i) => [String(i + 1), key, 'lead_title', 'Engineer', i === 0 ? `'${newTitles[0]}` : newTitles[i]]),
      );

      // JSON Lines: the CSV's columns as members, `row` a number, the text as it is (a JSON string is no formula).
      const asJson = lines.map((line, i) => ({ ...line, row: Number(line.row), after: newTitles[i] }));
      const jsonl = path.join(dir, 'c.jsonl');
      await recordsOf(jsonl);
      const readJsonl = (text: string) =>
        text
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line));
      expect(
        readJsonl(fs.readFileSync(jsonl, 'utf8')).map((o) => ({ ...o, before_fetched_at: expect.any(String), after_fetched_at: expect.any(String) })),
      ).toEqual(asJson.map((o) => ({ ...o, before_fetched_at: expect.any(String), after_fetched_at: expect.any(String) })));
      const gz = path.join(dir, 'c.jsonl.gz');
      await recordsOf(gz);
      expect(readJsonl(zlib.gunzipSync(fs.readFileSync(gz)).toString('utf8')).map((o) => [o.row, o.key, o.after])).toEqual(
        asJson.map((o) => [o.row, o.key, o.after]),
      );

      // A workbook: one sheet, the same columns, every cell a text cell (the row number and "007" too).
      const xlsx = path.join(dir, 'c.xlsx');
      await recordsOf(xlsx);
      const sheet = (await readByExceljs(xlsx)).worksheets[0]!;
      const rows = sheet
        .getSheetValues()
        .slice(1)
        .map((row) => (row as unknown[]).slice(1));
      expect(rows[0]).toEqual(['row', 'key', 'field', 'before', 'after', 'before_fetched_at', 'after_fetched_at']);
      expect(rows.slice(1).map((row) => row.slice(0, 5))).toEqual(asJson.map((o) => [String(o.row), o.key, o.field, o.before, o.after]));
      expect(zipPart(xlsx, 'xl/worksheets/sheet1.xml')!.toString('utf8')).not.toMatch(/<c [^>]*t="(?!inlineStr)|<f>|<v>/);

      const refused = await runCli(['enrich', input, '--changes', path.join(dir, 'c.xlsx.gz')], {
        env: { LEAD_API_BASE_URL: api.baseUrl, LEAD_API_TOKEN: 'token-0123456789', LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') },
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        `lead-enrich: Invalid option --changes: an .xlsx is compressed already, got '${path.join(dir, 'c.xlsx.gz')}': drop the .gz (code: config)\n`,
      );
      expect(fs.existsSync(path.join(dir, 'c.xlsx.gz'))).toBe(false);
    } finally {
      api.close();
    }
  });

  it('JSON Lines and .xlsx outputs carry lead_changed too', async () => {
    const sandbox = await startSandbox({ port: 0, rpm: 60_000, drift: 0.5 });
    try {
      const dir = tempDir();
      const env = { LEAD_API_BASE_URL: sandbox.baseUrl, LEAD_API_TOKEN: sandbox.token, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') };
      const people = emails(20);
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...people.map((e) => [e])]);
      expect((await runCli(['enrich', input, '-o', path.join(dir, 'one.csv')], { env })).code).toBe(0);
      sandbox.nextDay();
      const jsonl = await runCli(['enrich', input, '-o', path.join(dir, 'two.jsonl'), '--refresh', '--changes', path.join(dir, 'c1.csv')], { env });
      expect(jsonl.code, jsonl.stderr).toBe(0);
      const changedOf = (file: string) => {
        const byRow = new Map<string, string[]>();
        for (const line of readCsvObjects(file)) byRow.set(line.row!, [...(byRow.get(line.row!) ?? []), line.field!]);
        return people.map((_, i) => (byRow.get(String(i + 1)) ?? []).join(';'));
      };
      const records = fs
        .readFileSync(path.join(dir, 'two.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(records.map((record) => record.lead_changed)).toEqual(changedOf(path.join(dir, 'c1.csv')));
      expect(records.some((record) => record.lead_changed !== '')).toBe(true);
      sandbox.nextDay();
      const xlsx = await runCli(['enrich', input, '-o', path.join(dir, 'three.xlsx'), '--refresh', '--changes', path.join(dir, 'c2.csv')], { env });
      expect(xlsx.code, xlsx.stderr).toBe(0);
      // Read back by another program than ours.
      const sheet = (await readByExceljs(path.join(dir, 'three.xlsx'))).worksheets[0]!;
      const header = (sheet.getRow(1).values as unknown[]).slice(1);
      const at = header.indexOf('lead_changed') + 1;
      expect(at).toBe(header.length);
      const cells = people.map((_, i) => String(sheet.getRow(i + 2).getCell(at).value ?? ''));
      expect(cells).toEqual(changedOf(path.join(dir, 'c2.csv')));
    } finally {
      await sandbox.close();
    }
  });

  it('is an output: never the input, the store or another output (exit 1, nothing written); standard output by -, unless the rows go there', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
    const store = path.join(dir, 'store.sqlite');
    // The store's log too, which SQLite deletes when the store closes: a changes file there would be gone
    // while the --json summary still named it (and, while another run writes the store, its answers with it).
    const family = (suffix: string) => path.join(fs.realpathSync(dir), `store.sqlite${suffix}`);
    const targets = [
      [input, 'the input'],
      [store, '--store'],
      [path.join(dir, 'out.csv'), '--output'],
      [family('-wal'), "the store's write-ahead log"],
      [family('-shm'), "the store's shared-memory index"],
      [family('-journal'), "the store's rollback journal"],
    ] as const;
    for (const [target, said] of targets) {
      const r = await runCli(['enrich', input, '--sandbox', '-o', path.join(dir, 'out.csv'), '--store', store, '--changes', target], {});
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`lead-enrich: --changes would overwrite ${said} (${target}): choose another path (code: config)\n`);
      expect(fs.existsSync(path.join(dir, 'out.csv'))).toBe(false);
    }
    // A path it cannot write is said naming --changes (not -o / --errors), before any lookup.
    const through = path.join(input, 'changes.csv');
    const unwritable = await runCli(['enrich', input, '--sandbox', '-o', path.join(dir, 'out.csv'), '--store', store, '--changes', through], {});
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toBe(
      `lead-enrich: Cannot write ${through}: a part of the path is a file, not a folder; choose another path with --changes (code: unwritable_output)\n`,
    );
    expect(fs.existsSync(path.join(dir, 'out.csv'))).toBe(false);
    // `-` is standard output, as /dev/stdout is: the changes there, the --json summary on stderr.
    const dash = await runCli(['enrich', input, '--sandbox', '-o', path.join(dir, 'out.csv'), '--store', store, '--changes', '-', '--json', '-q'], {});
    expect(dash.code, dash.stderr).toBe(0);
    expect(dash.stdout).toBe('row,key,field,before,after,before_fetched_at,after_fetched_at\n');
    expect(JSON.parse(dash.stderr)).toMatchObject({ exitCode: 0, rows: 1 });
    // Two outputs into one stream could not be taken apart: refused before any lookup.
    // /dev/stdout through a link of our own: a build that replaced what it names would replace the link only.
    fs.symlinkSync('/dev/stdout', path.join(dir, 'stdout'));
    for (const changes of ['-', path.join(dir, 'stdout')]) {
      const both = await runCli(['enrich', input, '--sandbox', '-o', '-', '--store', store, '--changes', changes], {});
      expect(both.code).toBe(1);
      expect(both.stderr).toBe('lead-enrich: --changes would write into standard output, where --output writes: give one of them a file (code: config)\n');
      expect(both.stdout).toBe('');
    }
  });
});

/** The README's nightly recipe (found by its heading wherever it is): its cron line's command, as cron hands it to sh. */
function nightlyCommand(): string {
  const readme = readDocument('README.md');
  const at = readme.indexOf('\n### Nightly: what changed since the last check\n');
  expect(at, 'the README has the nightly recipe').toBeGreaterThan(0);
  const block = codeBlocks(readme.slice(at), 'cron')[0]!;
  const line = block.split('\n').find((l) => /^[\d*]/.test(l))!;
  return line.split(/\s+/).slice(5).join(' ').replace(/\\%/g, '%');
}

describe('the README recipe: every night, what changed since the last check', () => {
  it(
    'mails nothing on a night when nothing changed, and the changed fields of the contacts looked up again when they did',
    async () => {
      const sandbox = await startSandbox({ port: 0, rpm: 60_000, drift: 0.3 });
      try {
        const dir = tempDir();
        const home = path.join(dir, 'home');
        fs.mkdirSync(path.join(home, '.config', 'lead-enrich'), { recursive: true });
        fs.writeFileSync(path.join(home, '.config', 'lead-enrich', 'token'), `${sandbox.token}\n`);
        fs.mkdirSync(path.join(dir, 'bin'));
        fs.writeFileSync(path.join(dir, 'bin', 'lead-enrich'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`, { mode: 0o755 });
        const store = path.join(dir, 'store.sqlite');
        const env = { PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, HOME: home, LEAD_ENRICH_STORE: store };
        const people = emails(60);
        writeCsv(path.join(dir, 'contacts.csv'), [['email'], ...people.map((e) => [e])]);
        const command = nightlyCommand().replace('cd /data/crm', `cd ${dir}`).replace('https://lead-api.example/v2', sandbox.baseUrl);
        const night = async () => {
          const r = await run('sh', ['-c', command], { cwd: dir, env, timeoutMs: 60_000 });
          return { stdout: r.stdout, stderr: r.stderr };
        };

        // The first night looks every contact up for the first time: nothing to compare, nothing mailed.
        expect(await night()).toEqual({ stdout: '', stderr: '' });
        // 91 days on for the first half of the contacts; meanwhile 30 % of the people changed jobs.
        const db = openSqliteFile(store);
        const old = people.slice(0, 30);
        for (const key of old) db.run('UPDATE results SET fetched_at = fetched_at - ? WHERE key = ?', 91 * 86_400_000, key);
        db.close();
        sandbox.nextDay();
        const lookups = () => lookupsSeen(sandbox);
        const before = lookups();
        const mailed = await night();
        expect(mailed.stderr).toBe('');
        // Only the old half was looked up again.
        expect(lookups() - before).toBe(old.length);
        const changed = old.filter(
          (key) => JSON.stringify(sandboxAnswer('lookup_email', key, { drift: 0.3, epoch: 1 })) !== JSON.stringify(sandboxAnswer('lookup_email', key)),
        );
        expect(changed.length).toBeGreaterThan(0);
        const lines = mailed.stdout.trim().split('\n');
        expect(mailed.stdout).toBe(fs.readFileSync(path.join(dir, 'changes.csv'), 'utf8').split('\n').slice(1).join('\n'));
        expect(new Set(lines.map((line) => line.split(',')[1]))).toEqual(new Set(changed));
        const enriched = readCsvObjects(path.join(dir, 'contacts.enriched.csv'));
        expect(enriched.filter((row) => row.lead_changed !== '').map((row) => row.email)).toEqual(changed);
      } finally {
        await sandbox.close();
      }
    },
    hangBound(60_000),
  );
});

/** The changes between two enriched outputs of the same file, by key, as a --changes file words them (without `row`). */
function changesByKey(before: Array<Record<string, string>>, after: Array<Record<string, string>>) {
  const byKey = new Map<string, Array<{ key: string; field: string; before: string; after: string }>>();
  for (const { key, field, before: then, after: now } of expectedChanges(before, after))
    byKey.set(key, [...(byKey.get(key) ?? []), { key, field, before: then, after: now }]);
  return byKey;
}

const linesIn = (file: string) => readCsvObjects(file).map(({ row, key, field, before, after }) => ({ row, key, field, before, after }));

describe('reported once, never absorbed', () => {
  it(
    'a refresh without --changes, then a run with --changes: its file lists the changes the refresh found, once; the next run lists none of them',
    async () => {
      const sandbox = await startSandbox({ port: 0, rpm: 60_000, drift: 0.3 });
      try {
        const people = emails(60);
        const dir = tempDir();
        const file = (name: string) => path.join(dir, name);
        const env = { LEAD_API_BASE_URL: sandbox.baseUrl, LEAD_API_TOKEN: sandbox.token, LEAD_ENRICH_STORE: file('store.sqlite') };
        writeCsv(file('in.csv'), [['email'], ...people.map((e) => [e])]);
        expect((await runCli(['enrich', file('in.csv'), '-o', file('one.csv')], { env })).code).toBe(0);
        sandbox.nextDay();
        // The other cron line: the nightly enrichment, which looks answers up again without --changes.
        expect((await runCli(['enrich', file('in.csv'), '-o', file('two.csv'), '--refresh', '-q'], { env })).code).toBe(0);
        const changed = changesByKey(readCsvObjects(file('one.csv')), readCsvObjects(file('two.csv')));
        expect(changed.size).toBeGreaterThan(5);
        const key = [...changed.keys()][0]!;
        const marks = async () =>
          (JSON.parse((await runCli(['store', 'show', key, '--json'], { env })).stdout) as Array<{ change?: string }>).map((e) => e.change ?? null);
        expect(await marks()).toEqual([null, 'not_reported']);

        const listing = await runCli(['enrich', file('in.csv'), '-o', file('three.csv'), '--changes', file('changes.csv'), '--json'], { env });
        expect(listing.code, listing.stderr).toBe(0);
        const expected = people.flatMap((k, i) => (changed.get(k) ?? []).map((line) => ({ row: String(i + 1), ...line })));
        expect(linesIn(file('changes.csv'))).toEqual(expected);
        const summary = JSON.parse(listing.stdout);
        expect(summary).toMatchObject({
          requests: 0,
          changed: { compared: 0, rows: 0, fields: {} },
          carriedOver: { keys: changed.size, lines: expected.length, keysNotInFile: 0 },
        });
        expect(listing.stderr).toContain(`Also listed, found by earlier runs and not reported before: ${expected.length} changes of ${changed.size} keys\n`);
        expect(await marks()).toEqual([null, 'reported']);

        const again = await runCli(['enrich', file('in.csv'), '-o', file('four.csv'), '--changes', file('changes4.csv'), '-q'], { env });
        expect(again.code, again.stderr).toBe(0);
        expect(fs.readFileSync(file('changes4.csv'), 'utf8')).toBe('row,key,field,before,after,before_fetched_at,after_fetched_at\n');
      } finally {
        await sandbox.close();
      }
    },
    hangBound(60_000),
  );

  it(
    'changes stored by a run SIGKILLed before its --changes file was complete are listed by the next run with --changes, once',
    async () => {
      const sandbox = await startSandbox({ port: 0, rpm: 60_000, drift: 0.5, latencyMs: [20, 40] });
      try {
        const people = emails(150);
        const dir = tempDir();
        const file = (name: string) => path.join(dir, name);
        const env = { LEAD_API_BASE_URL: sandbox.baseUrl, LEAD_API_TOKEN: sandbox.token, LEAD_ENRICH_STORE: file('store.sqlite') };
        writeCsv(file('in.csv'), [['email'], ...people.map((e) => [e])]);
        expect((await runCli(['enrich', file('in.csv'), '-o', file('one.csv')], { env, timeoutMs: 60_000 })).code).toBe(0);
        sandbox.nextDay();
        const before = lookupsSeen(sandbox);
        const killed = spawnCli(
          ['enrich', file('in.csv'), '-o', file('killed.csv'), '--refresh', '--changes', file('killed-changes.csv'), '--concurrency', '4', '-q'],
          { env, timeoutMs: 60_000 },
        );
        killed.stdin!.end();
        await until(() => lookupsSeen(sandbox) - before >= 40, '40 lookups of the killed run');
        await sigkill(killed);
        expect(fs.existsSync(file('killed-changes.csv'))).toBe(false);
        // What the store holds now: the killed run's answers for the keys it looked up, the first run's for the others.
        const listing = await runCli(['enrich', file('in.csv'), '-o', file('three.csv'), '--changes', file('changes.csv'), '--json'], { env });
        expect(listing.code, listing.stderr).toBe(0);
        const stored = changesByKey(readCsvObjects(file('one.csv')), readCsvObjects(file('three.csv')));
        expect(stored.size).toBeGreaterThan(0);
        expect(linesIn(file('changes.csv'))).toEqual(people.flatMap((k, i) => (stored.get(k) ?? []).map((line) => ({ row: String(i + 1), ...line }))));
        const again = await runCli(['enrich', file('in.csv'), '-o', file('four.csv'), '--changes', file('changes4.csv'), '-q'], { env });
        expect(again.code, again.stderr).toBe(0);
        expect(readCsvObjects(file('changes4.csv'))).toEqual([]);
      } finally {
        await sandbox.close();
      }
    },
    hangBound(90_000),
  );
});

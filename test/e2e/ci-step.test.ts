// `enrich` as a CI step (docs/cli-contract.md, "In a CI step"), through the built CLI with the
// runner's environment (GITHUB_ACTIONS, GITHUB_WORKSPACE, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT):
// one job summary section and the step outputs for every exit status, their figures the output's
// and the sidecar's; one annotation per code at the first row's line; nothing from the data read
// as a workflow command; never in the way (an unwritable file is one warning, --ci none writes
// nothing, -q and --json are as without CI, a run outside CI prints what it printed).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lines, runCli, spawnCli } from '../helpers/cli.js';
import { commandLines, htmlTags, readStepOutputs, renderSummary } from '../helpers/ci-files.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';
import { accountOnlyServer } from '../helpers/servers.js';
import { closeAll, envFor, expectNoCrash, lookupsSeen, sandbox, until } from './reliability/support.js';
import { hangBound } from '../helpers/processes.js';

afterAll(closeAll);

/** The runner's environment for a step whose workspace is `dir`. */
function runner(dir: string): Record<string, string> {
  return { GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: dir, GITHUB_STEP_SUMMARY: path.join(dir, 'summary.md'), GITHUB_OUTPUT: path.join(dir, 'output.txt') };
}

const read = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '');

/** What the step left: its summary sections, its outputs, and the output's and sidecar's rows by status. */
function stepOf(dir: string) {
  const summary = read(path.join(dir, 'summary.md'));
  const outputs = readStepOutputs(read(path.join(dir, 'output.txt')));
  const output = path.join(dir, 'in.enriched.csv');
  const rows = fs.existsSync(output) ? readCsvObjects(output) : [];
  const count = (status: string) => rows.filter((r) => r.lead_status === status).length;
  const sidecar = path.join(dir, 'in.enriched.errors.csv');
  const sections = [...renderSummary(summary).matchAll(/<h3>(.*)<\/h3>/g)].map((m) => m[1]!);
  return { summary, sections, outputs, rows, count, sidecarRows: fs.existsSync(sidecar) ? readCsvObjects(sidecar).length : 0 };
}

describe.concurrent('every outcome: one summary section, its status and code, and the step outputs equal to the files', () => {
  const cases: Array<[number, string, () => Promise<{ args: string[]; env: Record<string, string>; rows: string[] }>]> = [
    [0, '', async () => ({ args: [], env: envFor(await sandbox(), '.'), rows: emails(5, 'ok') })],
    [5, 'invalid_input', async () => ({ args: [], env: envFor(await sandbox(), '.'), rows: [...emails(3, 'ok'), 'broken@', 'also@broken'] })],
    [
      3,
      'budget',
      async () => ({ args: ['--budget', '8', '--concurrency', '1'], env: envFor(await sandbox({ notFoundRate: 0 }), '.'), rows: emails(20, 'budget') }),
    ],
    [
      4,
      'max_errors',
      async () => {
        const api = await accountOnlyServer(() => ({ status: 200, body: JSON.stringify({ status: 'success', data: { email_address: 'x', lead: 'nobody' } }) }));
        return {
          args: ['--max-errors', '3', '--retries', '0', '--concurrency', '1'],
          env: { LEAD_API_BASE_URL: api.baseUrl, LEAD_API_TOKEN: 'tok-ci-step-0123456789' },
          rows: emails(30, 'bad'),
        };
      },
    ],
    [
      2,
      'api_unavailable',
      async () => {
        const api = await accountOnlyServer(() => ({ status: 503, body: '' }));
        return {
          args: ['--patience', '1s', '--retries', '0'],
          env: { LEAD_API_BASE_URL: api.baseUrl, LEAD_API_TOKEN: 'tok-ci-step-0123456789' },
          rows: emails(20, 'down'),
        };
      },
    ],
    [1, 'unauthorized', async () => ({ args: [], env: envFor(await sandbox(), '.', 'tok-revoked-0123456789abcdef'), rows: emails(3, 'token') })],
  ];

  it.each(cases)(
    'exit %i (%s)',
    async (status, code, make) => {
      const dir = makeTempDir();
      const { args, env, rows } = await make();
      writeCsv(path.join(dir, 'in.csv'), [['email'], ...rows.map((k) => [k])]);
      const r = await runCli(['enrich', 'in.csv', ...args], {
        cwd: dir,
        env: { ...env, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite'), ...runner(dir) },
        timeoutMs: 30_000,
      });
      expectNoCrash(r);
      expect(r.code, r.stderr).toBe(status);
      const step = stepOf(dir);
      expect(step.sections, step.summary).toHaveLength(1);
      expect(step.sections[0]).toMatch(`(exit ${status}${code ? `, ${code}` : ''})`);
      expect(step.outputs['exit-code']).toBe(String(status));
      expect(step.outputs.code).toBe(status === 1 ? code : '');
      if (status === 1) {
        expect(step.outputs).toMatchObject({ rows: '0', found: '0', output: '', 'errors-file': '' });
        const fatal = lines(r.stderr).find((l) => l.startsWith('lead-enrich: '))!;
        expect(lines(r.stderr).at(-1)).toBe(`::error title=lead-enrich (${code})::${/^lead-enrich: (.*) \(code: unauthorized\)$/.exec(fatal)![1]}`);
        return;
      }
      expect(step.outputs).toMatchObject({
        rows: String(step.rows.length),
        found: String(step.count('found')),
        'not-found': String(step.count('not_found')),
        errors: String(step.count('error')),
        skipped: String(step.count('skipped')),
        output: path.join(dir, 'in.enriched.csv'),
        'errors-file': path.join(dir, 'in.enriched.errors.csv'),
      });
      expect(Number(step.outputs.errors) + Number(step.outputs.skipped)).toBe(step.sidecarRows);
      expect(renderSummary(step.summary).match(/<table>/g)!.length).toBeGreaterThanOrEqual(2);
    },
    hangBound(40_000),
  );

  it(
    'exit 130 (SIGINT): the summary so far, its outputs',
    async () => {
      const s = await sandbox({ rpm: 600 });
      const dir = makeTempDir();
      writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(300, 'sigint').map((k) => [k])]);
      const child = spawnCli(['enrich', 'in.csv'], { cwd: dir, env: { ...envFor(s, dir), ...runner(dir) } });
      child.stdin!.end();
      await until(() => lookupsSeen(s) >= 10, '10 lookups');
      child.kill('SIGINT');
      const r = await child.result;
      expect(r.code, r.stderr).toBe(130);
      const step = stepOf(dir);
      expect(step.sections).toEqual(['lead-enrich: Interrupted (exit 130, interrupted)']);
      expect(step.outputs).toMatchObject({ 'exit-code': '130', rows: '300', found: String(step.count('found')), skipped: String(step.count('skipped')) });
      expect(Number(step.outputs.skipped)).toBeGreaterThan(100);
    },
    hangBound(40_000),
  );
});

describe.concurrent('annotations: one per code, at the line of its first row', () => {
  it(
    "300 bad rows of two codes: two ::error lines, each at its first row's line (the header, --skip-lines, blank lines and a quoted line break counted)",
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      // Line 1 a title (--skip-lines 1), line 2 the header, then a blank line and a cell over two lines.
      const data = ['ann@acme.com,"two\nlines"', '', ...Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? `broken${i}@,x` : `reject${i}@acme.com,x`))];
      fs.writeFileSync(path.join(dir, 'in.csv'), `Contacts export\nemail,note\n${data.join('\n')}\n`);
      const r = await runCli(['enrich', 'in.csv', '--skip-lines', '1'], { cwd: dir, env: { ...envFor(s, dir), ...runner(dir) }, timeoutMs: 30_000 });
      expect(r.code, r.stderr).toBe(5);
      const annotations = lines(r.stderr).filter((l) => /^::(error|warning|notice)/.test(l));
      // broken0@ is data row 2, on line 6 (title, header, ann's two lines, the blank line); reject1@ row 3, line 7.
      expect(annotations).toEqual([
        '::error file=in.csv,line=7,title=lead-enrich (bad_request)::150 rows in error with bad_request: rows 3, 5, 7, 9, 11 and 145 more; see in.enriched.errors.csv',
        '::error file=in.csv,line=6,title=lead-enrich (invalid_input)::150 rows in error with invalid_input: rows 2, 4, 6, 8, 10 and 145 more; see in.enriched.errors.csv',
      ]);
    },
    hangBound(40_000),
  );

  it(
    "a file named ::error::x,line=9.csv, a header %0A::warning::y, cells ::error::z and ##[error]w: only lead-enrich's own commands start a line, escaped; the summary makes no link or tag of them",
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const name = '::error::x,line=9.csv';
      writeCsv(path.join(dir, name), [
        ['email', '%0A::warning::y'],
        ['ann@acme.com', '::error::z'],
        ['::error::z', '##[error]w'],
        ['##[error]w', '::error::z'],
      ]);
      const r = await runCli(['enrich', name, '--by', 'email', '--column', 'email'], {
        cwd: dir,
        env: { ...envFor(s, dir), ...runner(dir) },
        timeoutMs: 30_000,
      });
      expect(r.code, r.stderr).toBe(5);
      expect(commandLines(r.stdout)).toEqual([]);
      expect(commandLines(r.stderr)).toEqual([
        '::group::lead-enrich progress',
        '::endgroup::',
        '::error file=%3A%3Aerror%3A%3Ax%2Cline=9.csv,line=3,title=lead-enrich (invalid_input)::2 rows in error with invalid_input: rows 2, 3; see ::error::x,line=9.enriched.errors.csv',
      ]);
      const html = renderSummary(read(path.join(dir, 'summary.md')));
      expect(htmlTags(html)).toEqual(['h3', 'p', 'strong', 'table', 'tbody', 'td', 'th', 'thead', 'tr']);
      expect(html).toContain('<td>::error::x,line=9.enriched.csv</td>');
      expect(readStepOutputs(read(path.join(dir, 'output.txt'))).output).toBe(path.join(dir, '::error::x,line=9.enriched.csv'));
    },
    hangBound(40_000),
  );

  it(
    'a header ##[error]h and a title line ::error::t echoed in a warning and a fatal line: escaped where the line is written',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      fs.writeFileSync(path.join(dir, 'in.csv'), '::error::t\nemail,##[error]h\nann@acme.com,x\n');
      const r = await runCli(['enrich', 'in.csv', '--column', '##[set-output name=x;]y'], {
        cwd: dir,
        env: { ...envFor(s, dir), ...runner(dir) },
        timeoutMs: 30_000,
      });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain('#\\u0023[error]h');
      expect(r.stderr).toContain('#\\u0023[set-output name=x;]y');
      expect(commandLines(r.stdout + r.stderr)).toEqual([
        '::group::lead-enrich progress',
        '::endgroup::',
        expect.stringMatching(/^::error title=lead-enrich \(config\)::/),
      ]);
      expect(r.stdout + r.stderr).not.toContain('##[');
    },
    hangBound(40_000),
  );

  it(
    'rows written to stdout with -o - are data: unchanged, however they begin',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const r = await runCli(['enrich', '-', '-o', '-', '--fields', 'lead_status'], {
        cwd: dir,
        env: { ...envFor(s, dir), ...runner(dir) },
        input: 'email,note\nann@acme.com,x\n::error::z,##[error]w\n',
      });
      expect(r.code, r.stderr).toBe(5);
      expect(r.stdout).toBe('email,note,lead_status\nann@acme.com,x,found\n::error::z,##[error]w,error\n');
    },
    hangBound(40_000),
  );
});

/** A run's stderr with its times taken out: stamps, durations, rates. */
function timeless(text: string): string {
  return text
    .replace(/^\S+Z /gm, '')
    .replace(/[\d.]+ rows\/s/g, 'R')
    .replace(/\d+(\.\d+)?(h|ms|m|s)\b( \d+(\.\d+)?(h|ms|m|s)\b)*/g, 'T');
}

describe.concurrent('never in the way', () => {
  it(
    'an unwritable $GITHUB_STEP_SUMMARY: one warning line, the same exit status, the outputs still written',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com'], ['broken@']]);
      fs.mkdirSync(path.join(dir, 'summary.md'));
      const r = await runCli(['enrich', 'in.csv'], { cwd: dir, env: { ...envFor(s, dir), ...runner(dir) }, timeoutMs: 30_000 });
      expect(r.code, r.stderr).toBe(5);
      const warnings = lines(r.stderr).filter((l) => l.includes('could not write'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(
        /lead-enrich: could not write the job summary \(\$GITHUB_STEP_SUMMARY\) to .*summary\.md: EISDIR.*; the run and its exit status are as without --ci$/,
      );
      expect(readStepOutputs(read(path.join(dir, 'output.txt')))['exit-code']).toBe('5');
    },
    hangBound(40_000),
  );

  it(
    'outside CI, and with --ci none under a runner: the same lines as ever, and no file written',
    async () => {
      const dir = makeTempDir();
      writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(4, 'same').map((k) => [k]), ['broken@']]);
      const runs = [];
      for (const extra of [
        { args: [], env: {} },
        { args: ['--ci', 'none'], env: runner(dir) },
        { args: ['--ci', 'none'], env: { GITLAB_CI: 'true' } },
      ]) {
        const s = await sandbox();
        const store = path.join(makeTempDir(), 'store.sqlite');
        fs.rmSync(path.join(dir, 'in.enriched.csv'), { force: true });
        fs.rmSync(path.join(dir, 'in.enriched.errors.csv'), { force: true });
        const r = await runCli(['enrich', 'in.csv', ...extra.args], {
          cwd: dir,
          env: { ...envFor(s, dir), LEAD_ENRICH_STORE: store, ...extra.env },
          timeoutMs: 30_000,
        });
        expect(r.code, r.stderr).toBe(5);
        runs.push({ stdout: r.stdout, stderr: timeless(r.stderr) });
      }
      expect(runs[1]).toEqual(runs[0]);
      expect(runs[2]).toEqual(runs[0]);
      expect(fs.existsSync(path.join(dir, 'summary.md')) || fs.existsSync(path.join(dir, 'output.txt'))).toBe(false);
      expect(commandLines(runs[0]!.stderr)).toEqual([]);
    },
    hangBound(60_000),
  );

  it(
    '-q and --json under a runner: the same stdout and stderr as outside it; the files still written',
    async () => {
      const dir = makeTempDir();
      writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(4, 'quiet').map((k) => [k]), ['broken@']]);
      const outcomes = [];
      for (const env of [{}, runner(dir)]) {
        const s = await sandbox();
        fs.rmSync(path.join(dir, 'in.enriched.csv'), { force: true });
        fs.rmSync(path.join(dir, 'in.enriched.errors.csv'), { force: true });
        const r = await runCli(['enrich', 'in.csv', '-q', '--json'], {
          cwd: dir,
          env: { ...envFor(s, dir), LEAD_ENRICH_STORE: path.join(makeTempDir(), 's.sqlite'), ...env },
          timeoutMs: 30_000,
        });
        expect(r.code, r.stderr).toBe(5);
        const { startedAt: _s, endedAt: _e, elapsedMs: _t, lookupMs: _l, rowsPerMinute: _r, ...json } = JSON.parse(r.stdout);
        outcomes.push({ json, stderr: timeless(r.stderr) });
      }
      expect(outcomes[1]).toEqual(outcomes[0]);
      expect(lines(outcomes[0]!.stderr)).toHaveLength(1);
      expect(readStepOutputs(read(path.join(dir, 'output.txt')))).toMatchObject({ 'exit-code': '5', errors: '1' });
      expect(read(path.join(dir, 'summary.md'))).toMatch(/^### lead-enrich: /);
    },
    hangBound(60_000),
  );

  it(
    'GitLab: the progress in a collapsed section, the summary in the --ci-summary file, no GitHub command',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
      const r = await runCli(['enrich', 'in.csv', '--ci-summary', 'job-summary.md'], {
        cwd: dir,
        env: { ...envFor(s, dir), GITLAB_CI: 'true', CI_PROJECT_DIR: dir },
        timeoutMs: 30_000,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/^\x1b\[0Ksection_start:\d+:lead_enrich_progress\[collapsed=true\]\r\x1b\[0Klead-enrich progress\n/);
      expect(r.stderr).toMatch(/\n\x1b\[0Ksection_end:\d+:lead_enrich_progress\r\x1b\[0K\n/);
      expect(commandLines(r.stderr)).toEqual([]);
      expect(renderSummary(read(path.join(dir, 'job-summary.md')))).toMatch(/^<h3>lead-enrich: Done: 1 row \(exit 0\)<\/h3>/);
    },
    hangBound(40_000),
  );
});

describe.concurrent('which CI: the flag, the config file, the environment', () => {
  it(
    'a usage mistake yargs finds before the run: its section, its outputs and its ::error all the same',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
      const r = await runCli(['enrich', 'in.csv', '--rmp', '5'], { cwd: dir, env: { ...envFor(s, dir), ...runner(dir) } });
      expect(r.code, r.stderr).toBe(1);
      expect(stepOf(dir).sections).toEqual(['lead-enrich: failed (exit 1, usage)']);
      expect(stepOf(dir).outputs).toMatchObject({ 'exit-code': '1', code: 'usage' });
      expect(lines(r.stderr)).toEqual([
        "lead-enrich: Unknown option --rmp: did you mean --rpm? Run 'lead-enrich --help' for usage. (code: usage)",
        '::error title=lead-enrich (usage)::Unknown option --rmp: did you mean --rpm?',
      ]);
    },
    hangBound(40_000),
  );

  it(
    'the config file\'s "ci": "none" under a runner: nothing written; --ci github on the command line wins over it',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ ci: 'none' }), { mode: 0o600 });
      const off = await runCli(['enrich', 'in.csv', '--config', 'config.json'], { cwd: dir, env: { ...envFor(s, dir), ...runner(dir) } });
      expect(off.code, off.stderr).toBe(0);
      expect(fs.existsSync(path.join(dir, 'summary.md')) || fs.existsSync(path.join(dir, 'output.txt'))).toBe(false);
      expect(commandLines(off.stderr)).toEqual([]);
      const on = await runCli(['enrich', 'in.csv', '--config', 'config.json', '--ci', 'github'], { cwd: dir, env: { ...envFor(s, dir), ...runner(dir) } });
      expect(on.code, on.stderr).toBe(0);
      expect(stepOf(dir).sections).toEqual(['lead-enrich: Done: 1 row (exit 0)']);
    },
    hangBound(40_000),
  );

  it(
    '--ci-summary outside any CI: the summary in the file, nothing else',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com'], ['broken@']]);
      const r = await runCli(['enrich', 'in.csv', '--ci-summary', 'summary.md'], { cwd: dir, env: envFor(s, dir) });
      expect(r.code, r.stderr).toBe(5);
      expect(stepOf(dir).sections).toEqual(['lead-enrich: Done: 1 row holds a key that is malformed or refused by the API (exit 5, invalid_input)']);
      expect(commandLines(r.stderr)).toEqual([]);
      expect(fs.existsSync(path.join(dir, 'output.txt'))).toBe(false);
    },
    hangBound(40_000),
  );
});

// --report (cli-contract, "Report"): a run's figures as JSON under stable keys, or as one
// self-contained HTML page; written at the end of any run, a stopped one too. The figures are
// checked against the run's own output files; neither report holds the token.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RequestTimeline } from '../../src/lookup/request-path/request-timeline.js';
import { commandLineText } from '../../src/report/command-line.js';
import type { RunReport } from '../../src/report/run-report.js';
import { enrich } from '../../src/run/enrich.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { countNonEmpty, recordText, splitRecord } from '../../src/write/stored-cells.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { emails, readCsvObjects, writeCsv } from '../helpers/files.js';
import { accountOnlyServer } from '../helpers/servers.js';

let s: Sandbox;
let env: Record<string, string>;
beforeAll(async () => {
  s = await startSandbox({ port: 0, rpm: 60_000 });
  env = { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: s.token };
});
afterAll(() => s.close());
const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** Contacts with every outcome: found, not found (the sandbox's own 10 % and marked keys), malformed, empty. */
function contacts(dir: string): string {
  const rows = [['Email', 'Name'], ...emails(60, 'rep').map((e, i) => [e, `P${i}`]), ['x.notfound@acme-tools.com', 'NF'], ['broken@', 'B'], ['', 'E']];
  return writeCsv(path.join(dir, 'contacts.csv'), rows);
}

const readReport = (file: string): RunReport => JSON.parse(fs.readFileSync(file, 'utf8')) as RunReport;

describe('--report FILE.json', () => {
  it("holds the output's counts, the match rate and each added column's fill rate among found rows; not the token", async () => {
    const dir = tempDir();
    const input = contacts(dir);
    const output = path.join(dir, 'out.csv');
    const report = path.join(dir, 'r.json');
    const r = await runCli(['enrich', input, '-o', output, '--report', report], { env });
    expect(r.code, r.stderr).toBe(5);
    const rows = readCsvObjects(output);
    const sidecar = readCsvObjects(path.join(dir, 'out.errors.csv'));
    const json = readReport(report);
    const count = (status: string) => rows.filter((row) => row.lead_status === status).length;
    expect(json.rows.total).toBe(rows.length);
    expect(json.rows.byStatus).toEqual({ found: count('found'), not_found: count('not_found'), error: count('error'), skipped: count('skipped') });
    expect(json.rows.byErrorCode).toEqual({ invalid_input: 1, no_key: 1 });
    expect(sidecar).toHaveLength(2);
    const found = rows.filter((row) => row.lead_status === 'found');
    const lookedUp = found.length + count('not_found');
    expect(json.matchRate).toEqual({
      lookedUp,
      found: found.length,
      rate: found.length / lookedUp,
      byKind: [{ kind: 'email', column: 'Email', lookedUp, found: found.length, rate: found.length / lookedUp }],
    });
    // Every data column the output adds, with the share of found rows holding a value in it.
    const dataColumns = Object.keys(rows[0]!).filter((name) => name.startsWith('lead_') && !['lead_status', 'lead_billing'].includes(name));
    expect(json.fillRates.foundRows).toBe(found.length);
    expect(json.fillRates.columns.map((c) => c.column)).toEqual(dataColumns);
    for (const { column, filled, rate } of json.fillRates.columns) {
      const holding = found.filter((row) => row[column] !== '').length;
      expect([column, filled, rate]).toEqual([column, holding, holding / found.length]);
    }
    expect(json).toMatchObject({
      exitStatus: 5,
      stoppedBy: null,
      reportVersion: 1,
      requests: { total: lookedUp, retries: 0, rateLimited: 0, apiUnavailableMs: 0 },
    });
    expect(json.credits.spent).toBe(json.credits.before - json.credits.after);
    expect(json.rate.perWindow.reduce((sum, b) => sum + b.requests, 0)).toBe(lookedUp);
    expect(json.rate).toMatchObject({ windowMs: 60_000, limit: 60_000 });
    expect(json.commandLine).toBe(`lead-enrich enrich ${input} -o ${output} --report ${report}`);
    expect(Date.parse(json.endedAt) - Date.parse(json.startedAt)).toBe(json.durationMs);
    expect(fs.readFileSync(report, 'utf8')).not.toContain(s.token);
    // The summary names the report, and says each column's fill rate on one line.
    expect(r.stderr).toMatch(new RegExp(`Fill rate of the ${found.length} rows found: lead_name 100 %, lead_title \\d+ %,`));
    expect(r.stderr).toContain(`Report: ${report}`);
  });

  it("fill rates of answers the store hands over as cells (the known-rows path) are the output's too", async () => {
    // Leads with gaps: no title on every third, a company with a comma and quotes, no URL on every fourth.
    let n = 0;
    const api = await accountOnlyServer(() => {
      n += 1;
      const lead = {
        name: `P ${n}`,
        ...(n % 3 ? { title: `Title ${n}` } : {}),
        company_name: n % 2 ? 'Acme, "Tools"' : '',
        ...(n % 4 ? { network_url: `https://www.linkedin.com/in/p-${n}` } : {}),
      };
      return { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: 'x', lead } }) };
    });
    closers.push(api.close);
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(24, 'gap').map((e) => [e])]);
    const options = { input, baseUrl: api.baseUrl, token: 't', store: path.join(dir, 's.sqlite'), concurrency: 1 };
    const first = path.join(dir, 'first.json');
    await enrich({ ...options, output: path.join(dir, 'first.csv'), report: first });
    const again = path.join(dir, 'again.json');
    const summary = await enrich({ ...options, output: path.join(dir, 'again.csv'), report: again });
    expect(summary.billing.cached).toBe(24);
    const rows = readCsvObjects(path.join(dir, 'again.csv'));
    const rates = Object.fromEntries(readReport(again).fillRates.columns.map((c) => [c.column, c.filled]));
    for (const column of ['lead_name', 'lead_title', 'lead_company_name', 'lead_network_url', 'lead_city']) {
      expect([column, rates[column]]).toEqual([column, rows.filter((row) => row[column] !== '').length]);
    }
    expect(rates).toMatchObject({ lead_name: 24, lead_title: 16, lead_company_name: 12, lead_network_url: 18, lead_city: 0 });
    expect(readReport(first).fillRates).toEqual(readReport(again).fillRates);
  });

  it('per waterfall kind: found ÷ looked up of each kind, a row counted under each kind that answered it', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['Email', 'LinkedIn'],
      ['a.notfound@acme-tools.com', 'https://www.linkedin.com/in/ana-ortiz-1'],
      ['b.notfound@acme-tools.com', 'https://www.linkedin.com/in/notfound-bo'],
      ['c@acme-tools.com', ''],
    ]);
    const report = path.join(dir, 'r.json');
    await enrich({ input, baseUrl: s.baseUrl, token: s.token, store: ':memory:', by: 'email,url', column: ['Email', 'LinkedIn'], report });
    const { matchRate } = readReport(report);
    const c = matchRate.byKind.find((k) => k.kind === 'email')!;
    // c@ may be one of the sandbox's 10 % not found: the figures follow the rows whatever it is.
    const cFound = c.found;
    expect(matchRate.byKind).toEqual([
      { kind: 'email', column: 'Email', lookedUp: 3, found: cFound, rate: cFound / 3 },
      { kind: 'url', column: 'LinkedIn', lookedUp: 2, found: 1, rate: 0.5 },
    ]);
    expect(matchRate).toMatchObject({ lookedUp: 3, found: 1 + cFound });
  });
});

describe('--report FILE.html', () => {
  it('is one self-contained page: no script, nothing from elsewhere, inline SVG charts, the found count and the match rate; not the token', async () => {
    const dir = tempDir();
    const input = contacts(dir);
    const report = path.join(dir, 'r.html');
    const json = path.join(dir, 'r.json');
    // --base-url on the command line: a URL the report shows as text, never as a reference.
    const r = await runCli(['enrich', input, '-o', path.join(dir, 'out.csv'), '--report', report, '--base-url', s.baseUrl], {
      env: { LEAD_API_TOKEN: s.token },
    });
    expect(r.code, r.stderr).toBe(5);
    await runCli(['enrich', input, '-o', path.join(dir, 'again.csv'), '--report', json], { env });
    const html = fs.readFileSync(report, 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    for (const outside of [/<script/i, /https?:/i, /url\(/i, /@import/i, /\ssrc=/i, /\shref=/i, /<link/i, /<iframe/i, /<object/i])
      expect(html).not.toMatch(outside);
    expect(html).not.toContain(s.token);
    expect(html.match(/<svg /g)).toHaveLength(2);
    expect(html).toContain('prefers-color-scheme: dark');
    expect(html).toContain('@media print');
    const figures = readReport(json);
    const percent = `${(Math.round(figures.matchRate.rate! * 1000) / 10).toFixed(1)} %`;
    expect(html).toContain(`<b>${figures.rows.byStatus.found}</b><span>found</span>`);
    expect(html).toContain(`<b>${percent}</b><span>match rate`);
    // A bar per column in the fill-rate chart.
    expect(html.match(/<rect class="bar" x="250"/g)).toHaveLength(figures.fillRates.columns.length);
    // The base URL shown, its colon a character reference.
    expect(html).toContain(`--base-url ${s.baseUrl.replace('http:', 'http&#58;')}`);
  });
});

describe('the report in words a manager reads', () => {
  it('headlines the outcome in words (the exit status after it), names both files by absolute path, and never lists a skipped row as an error', async () => {
    const dir = tempDir();
    contacts(dir);
    const r = await runCli(['enrich', 'contacts.csv', '-o', 'out.csv', '--report', 'r.html'], { env, cwd: dir });
    expect(r.code, r.stderr).toBe(5);
    await runCli(['enrich', 'contacts.csv', '-o', 'out2.csv', '--report', 'r.json'], { env, cwd: dir });
    const json = readReport(path.join(dir, 'r.json'));
    expect(json.outcome).toBe('Finished: 1 of 63 rows has a key that is malformed or that the API refused; every other row is done.');
    expect(json.files).toEqual({ input: path.join(dir, 'contacts.csv'), output: path.join(dir, 'out2.csv'), errors: path.join(dir, 'out2.errors.csv') });
    expect(json.rows.bySkipReason).toEqual({ no_key: 1 });
    const html = fs.readFileSync(path.join(dir, 'r.html'), 'utf8');
    expect(html).toContain(`<h2>${json.outcome}</h2>`);
    expect(html).not.toMatch(/<h2>Exit status/);
    expect(html).toContain('Exit status 5:');
    expect(html).toContain(`<td>${path.join(dir, 'contacts.csv')}</td>`);
    expect(html).toMatch(/<code>no_key<\/code><\/td><td[^>]*>skipped \(not an error\)<\/td>/);
    expect(html).toMatch(/<code>invalid_input<\/code><\/td><td[^>]*>error<\/td>/);
    // A run shorter than a minute: its rate is said to be over the time it sent requests.
    expect(html).toMatch(/The run sent its \d+ requests in [^:]+: the rate is of that time, as requests per minute\./);
  });

  it('draws the rate of a run shorter than a window over the time it sent requests: a run at the full limit peaks at the limit', async () => {
    // 600 a minute, paced at 10 a second: 30 lookups in about 3 s, which is the limit used in full.
    const paced = await startSandbox({ port: 0, rpm: 600 });
    closers.push(() => paced.close());
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(30, 'pace').map((e) => [e])]);
    const report = path.join(dir, 'r.json');
    const r = await runCli(['enrich', input, '--report', report], { env: { LEAD_API_BASE_URL: paced.baseUrl, LEAD_API_TOKEN: paced.token } });
    expect(r.code, r.stderr).toBe(0);
    const json = readReport(report);
    expect(json.rate.limit).toBe(600);
    expect(json.rate.perWindow).toHaveLength(1);
    expect(json.rate.perWindow[0]!.spanMs).toBeLessThan(10_000);
    // Not 30 (the lookups over a minute the run never lasted): about 600, never above the pace.
    expect(json.rate.peak).toBeGreaterThan(450);
    expect(json.rate.peak).toBeLessThanOrEqual(610);
  });
});

describe('a run that stops early still writes its report', () => {
  it('at the credit reserve: exit 3, the report says so', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(30, 'broke').map((e) => [e])]);
    const report = path.join(dir, 'r.json');
    const html = path.join(dir, 'r.html');
    const r = await runCli(['enrich', input, '--min-credits', String(s.credits - 20), '--report', report, '-q'], { env });
    expect(r.code).toBe(3);
    const json = readReport(report);
    expect(json).toMatchObject({ exitStatus: 3, stoppedBy: 'credits', rows: { total: 30 } });
    expect(json.rows.byErrorCode.credit_reserve).toBeGreaterThan(0);
    const again = await runCli(['enrich', input, '-o', path.join(dir, 'b.csv'), '--min-credits', String(s.credits), '--report', html, '-q'], { env });
    expect(again.code).toBe(3);
    expect(fs.readFileSync(html, 'utf8')).toContain('Stopped early: the credit reserve was reached');
  });

  it('at --max-errors (4), interrupted (130), and when the API stayed down past --patience (2)', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(80, 'stop').map((e) => [e])]);
    const failing = await accountOnlyServer(() => ({ status: 200, body: JSON.stringify({ status: 'success', data: { email_address: 'x', lead: 'nobody' } }) }));
    const down = await startSandbox({ port: 0, outage: { afterMs: 0 } });
    closers.push(failing.close, () => down.close());
    const quick = { store: ':memory:', concurrency: 2, tuning: { retryBaseDelayMs: 1, retryMaxDelayMs: 2 } };
    const stopped = new AbortController();
    stopped.abort();
    const runs = [
      { code: 4, reason: 'max_errors', options: { baseUrl: failing.baseUrl, token: 't', maxErrors: 3, retries: 0 } },
      { code: 130, reason: 'interrupt', options: { baseUrl: s.baseUrl, token: s.token, signal: stopped.signal } },
      { code: 2, reason: 'api_unavailable', options: { baseUrl: down.baseUrl, token: down.token, patience: '1s' } },
    ];
    for (const { code, reason, options } of runs) {
      const report = path.join(dir, `${reason}.json`);
      const summary = await enrich({ input, output: path.join(dir, `${reason}.csv`), report, ...quick, ...options });
      expect(summary.report).toBe(report);
      expect(readReport(report)).toMatchObject({ exitStatus: code, stoppedBy: reason, rows: { total: 80 } });
    }
    expect(readReport(path.join(dir, 'api_unavailable.json')).requests.apiUnavailableMs).toBeGreaterThan(0);
  });
});

describe('--report is checked before any request', () => {
  it('refuses a name that is not .html or .json, a path through a file, a folder, and the output itself', async () => {
    const dir = tempDir();
    const input = contacts(dir);
    const before = s.stats.requests;
    const folder = path.join(dir, 'folder.html');
    fs.mkdirSync(folder);
    const cases: Array<[string, RegExp]> = [
      ['r.txt', /Invalid option --report: must be a file name ending in \.html or \.json \(the report's format\), got 'r\.txt'/],
      [path.join(input, 'r.html'), /Cannot write the report .*r\.html: a part of the path is a file, not a folder; choose another path with --report/],
      [folder, /Cannot write the report .*folder\.html: it is a folder; choose another path with --report/],
    ];
    for (const [file, message] of cases) {
      const r = await runCli(['enrich', input, '--report', file], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(message);
    }
    const same = await runCli(['enrich', input, '-o', path.join(dir, 'x.json'), '--format', 'csv', '--report', path.join(dir, 'x.json')], { env });
    expect(same.code).toBe(1);
    expect(same.stderr).toMatch(/--report would overwrite --output/);
    expect(s.stats.requests).toBe(before);
  });
});

describe('what the report is made of', () => {
  it('requests per window: one number per window, merged when a run has very many, so memory does not grow with the run', () => {
    const timeline = new RequestTimeline(0, 1000);
    for (let t = 0; t < 10_000; t += 100) timeline.note(t);
    expect(timeline.buckets(10_000)).toHaveLength(10);
    expect(timeline.buckets(10_000).every((b) => b.requests === 10)).toBe(true);
    const long = new RequestTimeline(0, 10);
    for (let t = 0; t < 1_000_000; t += 7) long.note(t);
    const buckets = long.buckets(1_000_000);
    expect(buckets.length).toBeLessThanOrEqual(4096);
    expect(long.bucketMs).toBeGreaterThan(10);
    expect(buckets.reduce((sum, b) => sum + b.requests, 0)).toBe(Math.ceil(1_000_000 / 7));
  });

  it("a stored record's cells are looked at without splitting it: the same as split", () => {
    const records = [['Ana', '', 'CTO, "Data"', '', '=x', ''], ['', '', '', '', '', ''], ['"', 'a,b', '', 'line\nbreak', '', 'z'], ['only']];
    for (const cells of records) {
      const record = recordText(cells);
      const counts = new Float64Array(6);
      countNonEmpty(record, counts);
      countNonEmpty(record, counts);
      expect([...counts].map((n) => n / 2)).toEqual(Array.from({ length: 6 }, (_, i) => ((splitRecord(record)[i] ?? '') === '' ? 0 : 1)));
    }
  });

  it('the command line masks passwords in URLs, and the token should it be there', () => {
    expect(commandLineText(['lead-enrich', 'enrich', 'in put.csv', '--redis', 'redis://:s3cret@10.0.0.5:6379', '--x', 'tok-123456'], ['tok-123456'])).toBe(
      "lead-enrich enrich 'in put.csv' --redis 'redis://:***@10.0.0.5:6379' --x '***'",
    );
  });
});

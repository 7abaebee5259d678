// The CI step's texts (src/cli/ci/; docs/cli-contract.md, "In a CI step"): the job summary rendered
// by a real GitHub-flavoured Markdown parser (its tables come out as tables, a hostile name makes
// no link and no tag), workflow commands escaped as the runner unescapes them, one annotation per
// code within the runner's caps, and step outputs as the runner reads $GITHUB_OUTPUT.
import { describe, expect, it } from 'vitest';
import { annotationLines, codeCounts } from '../../src/cli/ci/annotations.js';
import { SUMMARY_BYTES, fatalSection, runSection } from '../../src/cli/ci/job-summary.js';
import { markdownText } from '../../src/cli/ci/markdown-text.js';
import { fatalOutputs, outputsText, runOutputs } from '../../src/cli/ci/step-outputs.js';
import { escapeData, escapeProperty, workflowCommand } from '../../src/cli/ci/workflow-commands.js';
import type { EnrichSummary } from '../../src/run/summary.js';
import { commandLines, htmlTags, readStepOutputs, renderSummary } from '../helpers/ci-files.js';

const HOSTILE = [
  '::error::x,line=9.csv',
  '%0A::warning::y',
  '[a](https://evil.example)',
  '<img src=x onerror=alert(1)>',
  'www.evil.example',
  'ann@acme.com',
  '@team #12 :smile:',
  '| col |',
  '`code`',
  '*em* _u_ ~~s~~',
  '\n# heading\n',
];

/** A run's summary: 1000 rows, found, errors of two codes, a budget, written files. */
function summaryOf(over: Partial<EnrichSummary> = {}): EnrichSummary {
  return {
    input: 'data/contacts.csv',
    output: 'out/contacts.csv',
    errorsFile: 'out/contacts.errors.csv',
    lookup: { kind: 'email', column: 'Email', with: [] },
    foundBy: { email: 700 },
    answeredBy: { email: 900 },
    fillRates: {},
    filled: {},
    changed: { compared: 30, rows: 9, fields: { lead_title: 9 } },
    changesFile: undefined,
    withStatus: {},
    rows: 1000,
    limit: undefined,
    partial: false,
    status: { found: 700, not_found: 200, error: 60, skipped: 40 },
    billing: { charged: 600, free: 200, cached: 100, duplicate: 0, none: 100 },
    withBilling: {},
    errorCodes: { invalid_input: 50, bad_request: 10, no_key: 40 },
    skipReasons: { no_key: 40 },
    fileErrors: 60,
    requests: 910,
    retries: 0,
    rateLimited: 0,
    credits: { before: 10_000, after: 7_600, spent: 2_400, fell: 2_400, reserve: 100, exact: true },
    accountRead: true,
    rpm: 600,
    windowMs: 60_000,
    concurrency: 4,
    startedAt: '2026-12-01T00:00:00.000Z',
    endedAt: '2026-12-01T00:04:12.000Z',
    elapsedMs: 252_000,
    rowsLookedUp: 900,
    lookupMs: 250_000,
    rowsPerMinute: 216,
    invalidUtf8Cells: 0,
    outputFormat: 'csv',
    stoppedBy: undefined,
    budgets: [{ budget: '5000/day', credits: 5000, per: 'day', spent: 2400, left: 2600, period: '2026-12-01', stopped: false }],
    apiUnavailableMs: 0,
    apiFailure: undefined,
    patienceMs: 600_000,
    shard: undefined,
    report: 'out/run.html',
    ...over,
  } as EnrichSummary;
}

const place = { shownPath: (file: string) => file };

describe('the job summary, rendered as GitHub-flavoured Markdown', () => {
  it("names the outcome, exit status and code in its heading; its tables come out as tables; figures are the summary object's", () => {
    const s = summaryOf();
    const markdown = runSection(s, codeCounts(s), place);
    const html = renderSummary(markdown);
    expect(html).toMatch(/^<h3>lead-enrich: Done: 60 rows hold keys that are malformed or refused by the API \(exit 5, invalid_input\)<\/h3>/);
    expect(html.match(/<table>/g)).toHaveLength(4);
    expect(html).toMatch(/<th align="right">not found<\/th>/);
    expect(html).toMatch(
      /<td><strong>Rows<\/strong><\/td>\n<td align="right">1000<\/td>\n<td align="right">700<\/td>\n<td align="right">200<\/td>\n<td align="right">60<\/td>\n<td align="right">40<\/td>/,
    );
    expect(html).toMatch(/<td>invalid_input<\/td>\n<td align="right">50<\/td>/);
    expect(html).toMatch(/<td>no_key<\/td>\n<td align="right">40<\/td>\n<td>skipped<\/td>/);
    expect(html).toContain('10000 before, 7600 after, 2400 spent, reserve 100');
    expect(html).toContain('5000/day: 2400 spent on 2026-12-01 (UTC), 2600 left');
    expect(html).toContain('9 of the 30 rows looked up again');
    expect(html).toContain('<td>out/contacts.errors.csv</td>');
    expect(html).toContain('Input: data/contacts.csv, by email from column Email · 4m 12s · lead-enrich ');
    expect(htmlTags(html)).toEqual(['h3', 'p', 'strong', 'table', 'tbody', 'td', 'th', 'thead', 'tr']);
  });

  it.each(HOSTILE)('a file and column named %j: shown as text, no link, no tag, no heading, the table whole', (name) => {
    const s = summaryOf({ input: name, output: `${name}.out`, errorsFile: name, lookup: { kind: 'email', column: name, with: [] } });
    const html = renderSummary(runSection(s, codeCounts(s), place));
    expect(htmlTags(html)).toEqual(['h3', 'p', 'strong', 'table', 'tbody', 'td', 'th', 'thead', 'tr']);
    expect(html.match(/<h3>/g)).toHaveLength(1);
    const shown = name.replace(/\n/g, '\\n').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
    // The file table keeps the name whole in its cell: a pipe in it splits none.
    expect(html).toContain(`<tr>\n<td>Output</td>\n<td>${shown}.out</td>\n</tr>`);
    expect(html).toContain(`column ${shown}`);
  });

  it('every outcome has its words: exit 0 has no code, a stop names its own', () => {
    const clean = summaryOf({ status: { found: 700, not_found: 300, error: 0, skipped: 0 }, errorCodes: {}, skipReasons: {}, fileErrors: 0 });
    const heading = (s: EnrichSummary) => /^<h3>(.*)<\/h3>/.exec(renderSummary(runSection(s, codeCounts(s), place)))?.[1];
    expect(heading(clean)).toBe('lead-enrich: Done: 1000 rows (exit 0)');
    const budget = summaryOf({
      stoppedBy: 'budget',
      budgets: [{ budget: '500/day', credits: 500, per: 'day', spent: 500, left: 0, period: '2026-12-01', stopped: true }],
    });
    expect(heading(budget)).toBe('lead-enrich: Stopped early at --budget 500/day (exit 3, budget)');
    const interrupted = summaryOf({ stoppedBy: 'interrupt' });
    expect(heading(interrupted)).toBe('lead-enrich: Interrupted (exit 130, interrupted)');
  });

  it('lists ten codes at most, then how many more', () => {
    const errorCodes = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`code_${String(i).padStart(2, '0')}`, 100 - i]));
    const s = summaryOf({ errorCodes, skipReasons: {} });
    const html = renderSummary(runSection(s, codeCounts(s), place));
    expect(html.match(/<td>code_\d\d<\/td>/g)).toHaveLength(10);
    expect(html).toContain('and 2 more codes (179 rows)');
  });

  it('a fatal error: its code and its line as text, and nothing else', () => {
    const html = renderSummary(fatalSection({ status: 1, code: 'unauthorized', message: 'The API rejected the token (401): <b>[x](http://e.example)</b>' }));
    expect(html).toMatch(/^<h3>lead-enrich: failed \(exit 1, unauthorized\)<\/h3>/);
    expect(htmlTags(html)).toEqual(['h3', 'p']);
    expect(html).toContain('&lt;b&gt;[x](http://e.example)&lt;/b&gt;');
  });

  it(`is at most ${SUMMARY_BYTES / 1024} KiB, whatever the names`, () => {
    const long = 'x'.repeat(1_000_000);
    const s = summaryOf({ input: long, output: long, errorsFile: long, report: long, lookup: { kind: 'email', column: long, with: [] } });
    expect(Buffer.byteLength(runSection(s, codeCounts(s), place))).toBeLessThan(SUMMARY_BYTES);
    expect(markdownText(long)).toHaveLength(201);
  });
});

describe('workflow commands: escaped as the runner unescapes them', () => {
  it('a message: %, CR and LF; a property: those and : and ,', () => {
    expect(escapeData('100% done\r\n::warning::y')).toBe('100%25 done%0D%0A::warning::y');
    expect(escapeProperty('::error::x,line=9.csv')).toBe('%3A%3Aerror%3A%3Ax%2Cline=9.csv');
    expect(escapeProperty('%0A')).toBe('%250A');
    expect(escapeData('column ##[set-output name=x;]y')).toBe('column #\\u0023[set-output name=x;]y');
    expect(workflowCommand('error', { file: 'a,b.csv', line: 3, title: 'lead-enrich (x)', col: undefined }, 'two\nlines')).toBe(
      '::error file=a%2Cb.csv,line=3,title=lead-enrich (x)::two%0Alines',
    );
  });
});

describe("annotations: one per code, within the runner's 10 errors and 10 warnings a step", () => {
  const place = (codes: string[]) => ({
    file: 'data/in.csv',
    sidecar: 'out/in.errors.csv',
    rows: new Map(codes.map((c, i) => [c, [i + 1, i + 20, i + 40]])),
    lines: new Map(codes.map((_, i) => [i + 1, i + 2])),
  });

  it("300 bad rows of two codes: two annotations, at the first row's line, with the count and the first rows", () => {
    const codes = codeCounts({ errorCodes: { invalid_input: 200, bad_request: 100 }, skipReasons: {} });
    const lines = annotationLines(codes, place(['invalid_input', 'bad_request']));
    expect(lines).toEqual([
      '::error file=data/in.csv,line=2,title=lead-enrich (invalid_input)::200 rows in error with invalid_input: rows 1, 20, 40 and 197 more; see out/in.errors.csv',
      '::error file=data/in.csv,line=3,title=lead-enrich (bad_request)::100 rows in error with bad_request: rows 2, 21, 41 and 97 more; see out/in.errors.csv',
    ]);
  });

  it('twelve error codes: the ten with the most rows as ::error, the other two in one ::notice', () => {
    const errorCodes = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`code_${String(i).padStart(2, '0')}`, 100 - i]));
    const lines = annotationLines(codeCounts({ errorCodes, skipReasons: {} }), place(Object.keys(errorCodes)));
    expect(lines.filter((l) => l.startsWith('::error '))).toHaveLength(10);
    expect(lines.slice(10)).toEqual([
      '::notice file=data/in.csv,title=lead-enrich%3A 2 more codes::179 rows more, by code: code_10 90, code_11 89; see out/in.errors.csv',
    ]);
  });

  it('skipped rows a run again finishes are warnings, capped apart; no_key and complete say nothing', () => {
    const skipReasons = { no_key: 5, complete: 9, ...Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`stop_${String(i).padStart(2, '0')}`, 50 - i])) };
    const codes = codeCounts({ errorCodes: { invalid_input: 3, ...skipReasons }, skipReasons });
    const lines = annotationLines(codes, { file: undefined, sidecar: undefined, rows: new Map(), lines: new Map() });
    expect(lines[0]).toBe('::error title=lead-enrich (invalid_input)::3 rows in error with invalid_input');
    expect(lines.filter((l) => l.startsWith('::warning '))).toHaveLength(10);
    expect(lines[1]).toBe('::warning title=lead-enrich (stop_00)::50 rows skipped with stop_00 (run the same command again to finish them)');
    expect(lines.at(-1)).toBe('::notice title=lead-enrich%3A 1 more code::40 rows more, by code: stop_10 40');
    expect(lines.join('\n')).not.toMatch(/no_key|complete/);
  });

  it('a hostile input and sidecar name stay inside their property and message: only the commands meant start a line', () => {
    const codes = codeCounts({ errorCodes: { invalid_input: 1 }, skipReasons: {} });
    const [line] = annotationLines(codes, {
      file: '::error::x,line=9.csv',
      sidecar: 'a\n::warning::y',
      rows: new Map([['invalid_input', [4]]]),
      lines: new Map([[4, 5]]),
    });
    expect(line).toBe(
      '::error file=%3A%3Aerror%3A%3Ax%2Cline=9.csv,line=5,title=lead-enrich (invalid_input)::1 row in error with invalid_input: row 4; see a%0A::warning::y',
    );
    expect(commandLines(line!)).toHaveLength(1);
  });
});

describe('step outputs, as the runner reads $GITHUB_OUTPUT', () => {
  it("a run's: every name, the figures the summary object holds, a path with a line break kept whole", () => {
    const s = summaryOf({ output: 'out/a\nb=1.csv' });
    const read = readStepOutputs(outputsText(runOutputs(s, 5)));
    expect(read).toEqual({
      'exit-code': '5',
      code: '',
      rows: '1000',
      found: '700',
      'not-found': '200',
      errors: '60',
      skipped: '40',
      'credits-spent': '2400',
      changed: '9',
      output: 'out/a\nb=1.csv',
      'errors-file': 'out/contacts.errors.csv',
      report: 'out/run.html',
      changes: '',
    });
  });

  it("a fatal error's: its status and code, no row, no file", () => {
    expect(readStepOutputs(outputsText(fatalOutputs({ status: 1, code: 'unauthorized' })))).toMatchObject({
      'exit-code': '1',
      code: 'unauthorized',
      rows: '0',
      found: '0',
      output: '',
    });
  });
});

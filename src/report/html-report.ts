// The run report as one self-contained HTML page (docs/cli-contract.md, "Report"): no script, no font,
// image or style sheet from elsewhere; the charts are inline SVG (svg-charts.ts); one style sheet
// inline (report-style.ts), readable at 1280 px, in print, light or dark.
import { exitStatusShort } from '../core/exit-statuses.js';
import { stopWords } from '../lookup/stops.js';
import { duration, esc, num, pct, table, when } from './html-text.js';
import { REPORT_CSS } from './report-style.js';
import type { RunReport } from './run-report.js';
import { fillRateChart, timelineChart, windowName } from './svg-charts.js';

const NUMERIC_1_TO_9 = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9]);

function tiles(r: RunReport): string {
  const tile = (value: string, label: string) => `<div class="tile"><b>${value}</b><span>${esc(label)}</span></div>`;
  return `<div class="tiles">${[
    tile(num(r.rows.total), 'rows'),
    tile(num(r.rows.byStatus.found), 'found'),
    tile(pct(r.matchRate.rate), 'match rate (found ÷ looked up)'),
    tile(num(r.credits.spent), `credits spent${r.credits.exact ? '' : ' (estimate)'}`),
    tile(num(r.requests.total), 'requests'),
    tile(esc(duration(r.durationMs)), 'duration'),
  ].join('')}</div>`;
}

function outcome(r: RunReport): string {
  const cls = r.exitStatus === 0 ? 'ok' : r.exitStatus === 5 ? '' : 'bad';
  const stopped = r.stoppedBy ? `<p>${esc(stopWords(r.stoppedBy).report)}</p>` : '';
  // The outcome in words is the headline; the exit status (for whoever runs it in cron) comes after.
  return `<section class="notice ${cls}"><h2>${esc(r.outcome)}</h2>${stopped}<p class="muted">Exit status ${r.exitStatus}: ${esc(exitStatusShort(r.exitStatus))}.</p></section>`;
}

function rowsSection(r: RunReport): string {
  const statuses = (Object.entries(r.rows.byStatus) as Array<[string, number]>).map(([s, n]) => [esc(s), num(n), pct(r.rows.total ? n / r.rows.total : null)]);
  // A skipped row (no key, already complete, the reserve) is no error: its code is listed as a reason.
  const skipped = r.rows.bySkipReason ?? {};
  const codes = Object.entries(r.rows.byErrorCode).flatMap(([code, n]) => {
    const skips = skipped[code] ?? 0;
    return [
      ...(n > skips ? [[`<code>${esc(code)}</code>`, 'error', num(n - skips)]] : []),
      ...(skips > 0 ? [[`<code>${esc(code)}</code>`, 'skipped (not an error)', num(skips)]] : []),
    ];
  });
  // A stale row keeps its stored answer: listed by what stopped its refresh.
  for (const [code, n] of Object.entries(r.rows.stale?.byReason ?? {})) codes.push([`<code>${esc(code)}</code>`, 'stale (stored answer kept)', num(n)]);
  return `<div class="cols"><section><h2>Rows by status</h2>${table(['status', 'rows', 'share'], statuses, new Set([1, 2]))}</section>
<section><h2>Rows in error or skipped, by code</h2>${codes.length ? table(['error_code', 'status', 'rows'], codes, new Set([2])) : '<p class="muted">No row in error or skipped.</p>'}</section></div>`;
}

function matchSection(r: RunReport): string {
  const m = r.matchRate;
  const rows = m.byKind.map((k) => [esc(k.kind), esc(k.column), num(k.lookedUp), num(k.found), pct(k.rate)]);
  rows.push(['<b>all</b>', '', `<b>${num(m.lookedUp)}</b>`, `<b>${num(m.found)}</b>`, `<b>${pct(m.rate)}</b>`]);
  return `<section><h2>Match rate</h2><p class="muted">Found ÷ looked up (rows with an answer, found or not found), per lookup kind in the order tried.</p>${table(['kind', 'column', 'looked up', 'found', 'match rate'], rows, new Set([2, 3, 4]))}</section>`;
}

function fillSection(r: RunReport): string {
  const f = r.fillRates;
  const body =
    f.columns.length === 0
      ? '<p class="muted">This run writes no column an answer fills.</p>'
      : f.foundRows === 0
        ? '<p class="muted">No row was found: no fill rate.</p>'
        : fillRateChart(f.columns);
  const filled = r.filledCells.length
    ? `<h2>Cells filled (--fill)</h2>${table(
        ['input column', 'from', 'cells filled'],
        r.filledCells.map((c) => [esc(c.column), esc(c.fields.join(', then ')), num(c.filled)]),
        new Set([2]),
      )}`
    : '';
  return `<section><h2>Fill rate per added column</h2><p class="muted">Of the ${f.foundRows === 1 ? 'row' : `${num(f.foundRows)} rows`} found, the share holding a value in each column.</p>${body}${filled}</section>`;
}

/** What changed since the earlier answers: only in a run that looked keys up again. */
function changesSection(r: RunReport): string {
  const c = r.changes;
  if (!c || c.compared === 0) return '';
  const rows = c.fields.map((f) => [`<code>${esc(f.field)}</code>`, num(f.rows), pct(f.rows / c.compared)]);
  const list = rows.length ? table(['field', 'rows changed', 'share'], rows, new Set([1, 2])) : '<p class="muted">No answer changed.</p>';
  return `<section><h2>What changed since the last answer</h2><p class="muted">${num(c.rows)} of the ${num(c.compared)} rows whose key was looked up again changed; per field, the rows it changed in.</p>${list}</section>`;
}

function withSection(r: RunReport): string {
  if (r.with.length === 0) return '';
  const rows = r.with.map((w) => [
    `--with ${esc(w.operation)}`,
    ...(['found', 'not_found', 'error', 'skipped'] as const).map((s) => num(w.byStatus[s])),
    esc(
      Object.entries(w.billing)
        .filter(([, n]) => n > 0)
        .map(([b, n]) => `${b} ${num(n)}`)
        .join(', ') || '–',
    ),
  ]);
  return `<section><h2>--with operations</h2><p class="muted">Of the rows whose own lookup answered (found or not found).</p>${table(['operation', 'found', 'not found', 'error', 'skipped', 'billing'], rows, new Set([1, 2, 3, 4]))}</section>`;
}

function creditsSection(r: RunReport): string {
  const c = r.credits;
  const billing = Object.entries(r.billing).map(([b, n]) => [esc(b), num(n)]);
  const credits = [
    ['before', num(c.before)],
    ['after', `${num(c.after)}${c.exact ? '' : ' (estimate)'}`],
    ['spent', num(c.spent)],
    ['reserve (never spent)', num(c.reserve)],
  ];
  return `<div class="cols"><section><h2>Credits</h2>${table(['', 'credits'], credits, new Set([1]))}</section>
<section><h2>Billing (lead_billing)</h2>${table(['billing', 'rows'], billing, new Set([1]))}</section></div>${budgetsSection(r)}`;
}

/** Every --budget: what its UTC day or month spent (every run on the store), what is left, and which one stopped the run. */
function budgetsSection(r: RunReport): string {
  if (!r.budgets?.length) return '';
  const spentIn = { run: 'this run', day: 'UTC day', month: 'UTC month' } as const;
  const rows = r.budgets.map((b) => [
    `<code>--budget ${esc(b.budget)}</code>`,
    esc(b.period ? `${spentIn[b.per]} ${b.period}` : spentIn[b.per]),
    num(b.spent),
    num(b.left),
    esc(b.stopped ? `stopped the run${b.resetsAt ? `; resets ${when(b.resetsAt)}` : ''}` : '–'),
  ]);
  return `<section><h2>Budgets</h2><p class="muted">Spent in each budget's period by every run on the same store (or Redis); a budget of the run counts this run alone.</p>${table(['budget', 'period', 'spent', 'left', ''], rows, new Set([2, 3]))}</section>`;
}

function requestsSection(r: RunReport): string {
  const q = r.requests;
  const per = windowName(r.rate.windowMs);
  const figures = table(
    ['requests', 'retries', '429 answers', 'API unavailable', `peak per ${per}`, `limit per ${per}`],
    [
      [
        num(q.total),
        num(q.retries),
        num(q.rateLimited),
        esc(q.apiUnavailableMs > 0 ? duration(q.apiUnavailableMs) : 'never'),
        num(r.rate.peak),
        num(r.rate.limit),
      ],
    ],
    NUMERIC_1_TO_9,
  );
  const chart = q.total > 0 ? timelineChart(r.rate) : '<p class="muted">No lookup request was sent.</p>';
  // A run shorter than a window: its one bar is a rate over the seconds it sent, not a count of a minute.
  const only = r.rate.perWindow.length === 1 ? r.rate.perWindow[0] : undefined;
  const note =
    only && only.spanMs > 0 && only.spanMs < r.rate.bucketMs
      ? `<p class="muted">The run sent its ${num(only.requests)} requests in ${esc(duration(only.spanMs))}: the rate is of that time, as requests per ${esc(per)}.</p>`
      : '';
  return `<section><h2>Requests per ${esc(per)}</h2>${figures}${note}${chart}</section>`;
}

function runSection(r: RunReport): string {
  const rows = [
    ['command line', `<pre>${esc(r.commandLine)}</pre>`],
    ['input', esc(r.files.input)],
    ['output', esc(r.files.output ?? '–')],
    ['error sidecar', esc(r.files.errors ?? '–')],
    ['started', esc(when(r.startedAt))],
    ['ended', esc(when(r.endedAt))],
    ['duration', esc(duration(r.durationMs))],
  ];
  return `<section><h2>The run</h2>${table(undefined, rows)}</section>`;
}

export function htmlReport(r: RunReport): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>lead-enrich run report: ${esc(r.files.input)}</title>
<style>${REPORT_CSS}</style>
</head>
<body>
<main>
<h1>lead-enrich run report</h1>
<p class="sub">${esc(r.files.input)} · ${esc(when(r.startedAt))} · ${esc(duration(r.durationMs))}</p>
${tiles(r)}
${outcome(r)}
${rowsSection(r)}
${matchSection(r)}
${fillSection(r)}
${changesSection(r)}
${withSection(r)}
${creditsSection(r)}
${requestsSection(r)}
${runSection(r)}
<footer>${esc(r.tool.name)} ${esc(r.tool.version)} · report version ${r.reportVersion}</footer>
</main>
</body>
</html>
`;
}

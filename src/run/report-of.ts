// The run report's figures (report/run-report.ts) from the run's summary and what only the run
// knows besides: its lookups per rate window, the account's limit, the command line.
import { createRequire } from 'node:module';
import path from 'node:path';
import type { RequestTimeline } from '../lookup/request-path/request-timeline.js';
import { commandLineText } from '../report/command-line.js';
import { perWindowRate } from '../report/window-rate.js';
import type { RunReport } from '../report/run-report.js';
import { noBilling } from '../core/rows.js';
import { stopWords } from '../lookup/stops.js';
import { errorRows, exitStatusOf } from './exit-status.js';
import { stopFacts } from './stop-facts.js';
import type { EnrichSummary } from './summary.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

export interface ReportFacts {
  timeline: RequestTimeline;
  windowMs: number;
  /** The account's limit per window. */
  accountRpm: number;
  commandLine: readonly string[];
  /** Values never to show (the token), should one be on the command line. */
  secrets: readonly string[];
  /** --fill: the fields that fill each input column, in order. */
  fillFields: Record<string, string[]>;
}

const rate = (part: number, whole: number): number | null => (whole > 0 ? part / whole : null);

/** A file's path as absolute (the input is given as typed, the outputs are absolute): stdin and streams as they are named. */
function absolute(file: string): string {
  return file === '-' || file.startsWith('(') ? file : path.resolve(file);
}

/** What became of the run, in a sentence a manager reads without knowing exit statuses. */
function outcomeWords(s: EnrichSummary): string {
  const rows = `${s.rows} ${s.rows === 1 ? 'row' : 'rows'}`;
  if (s.stoppedBy) return stopWords(s.stoppedBy).reportOutcome(stopFacts(s));
  switch (exitStatusOf(s)) {
    case 0:
      return `Finished: all ${rows} done (found, not found, or skipped for a reason that is no error).`;
    case 5:
      return `Finished: ${s.status.error} of ${rows} ${s.status.error === 1 ? 'has' : 'have'} a key that is malformed or that the API refused; every other row is done.`;
    default:
      return `Finished with errors: ${errorRows(s)} of ${rows} could not be looked up (the API or the network failed); the error file lists them.`;
  }
}

/** The rows written with a stale answer, after the outcome: they are done for now, not refreshed. */
function staleWords(s: EnrichSummary): string {
  const n = s.stale.rows;
  return n > 0
    ? ` ${n} ${n === 1 ? 'row keeps its' : 'rows keep their'} stored answer, older than --max-age: the same command later refreshes ${n === 1 ? 'it' : 'them'}.`
    : '';
}

export function reportOf(s: EnrichSummary, facts: ReportFacts): RunReport {
  const kinds = s.lookup.waterfall ?? [{ kind: s.lookup.kind, column: s.lookup.column }];
  const lookedUp = s.status.found + s.status.not_found;
  const perWindow = facts.timeline.buckets(Date.parse(s.endedAt));
  const bucketMs = facts.timeline.bucketMs;
  return {
    reportVersion: 1,
    tool: { name: 'lead-enrich', version },
    commandLine: commandLineText(facts.commandLine, facts.secrets),
    startedAt: s.startedAt,
    endedAt: s.endedAt,
    durationMs: s.elapsedMs,
    exitStatus: exitStatusOf(s),
    stoppedBy: s.stoppedBy ?? null,
    files: { input: absolute(s.input), output: s.output ? absolute(s.output) : null, errors: s.errorsFile ? absolute(s.errorsFile) : null },
    outcome: `${outcomeWords(s)}${staleWords(s)}`,
    rows: {
      total: s.rows,
      byStatus: { ...s.status },
      byErrorCode: { ...s.errorCodes },
      bySkipReason: { ...s.skipReasons },
      stale: { rows: s.stale.rows, errors: s.stale.errors, byReason: { ...s.stale.reasons } },
    },
    matchRate: {
      lookedUp,
      found: s.status.found,
      rate: rate(s.status.found, lookedUp),
      byKind: kinds.map(({ kind, column }) => {
        const [answered, found] = [s.answeredBy[kind] ?? 0, s.foundBy[kind] ?? 0];
        return { kind, column, lookedUp: answered, found, rate: rate(found, answered) };
      }),
    },
    fillRates: {
      foundRows: s.status.found,
      columns: Object.entries(s.fillRates).map(([column, filled]) => ({ column, filled, rate: rate(filled, s.status.found) })),
    },
    changes: {
      compared: s.changed.compared,
      rows: s.changed.rows,
      fields: Object.entries(s.changed.fields)
        .sort((a, b) => b[1] - a[1])
        .map(([field, rows]) => ({ field, rows })),
    },
    filledCells: Object.entries(s.filled).map(([column, filled]) => ({ column, fields: facts.fillFields[column] ?? [], filled })),
    with: s.lookup.with.map((operation) => ({
      operation,
      byStatus: { found: 0, not_found: 0, error: 0, skipped: 0, ...s.withStatus[operation] },
      billing: { ...noBilling(), ...s.withBilling[operation] },
    })),
    billing: { ...s.billing },
    credits: { ...s.credits },
    budgets: s.budgets.map((b) => ({
      budget: b.budget,
      per: b.per,
      credits: b.credits,
      spent: b.spent,
      left: b.left,
      period: b.period ?? null,
      stopped: b.stopped,
      resetsAt: b.resetsAt ?? null,
    })),
    requests: { total: s.requests, retries: s.retries, rateLimited: s.rateLimited, apiUnavailableMs: s.apiUnavailableMs },
    rate: {
      windowMs: facts.windowMs,
      limit: facts.accountRpm,
      used: s.rpm,
      bucketMs: facts.timeline.bucketMs,
      perWindow,
      peak: Math.round(Math.max(0, ...perWindow.map((b) => perWindowRate(b, bucketMs, facts.windowMs)))),
    },
  };
}

// How a run tells the user how it goes: a progress bar on a TTY (cli-progress), a plain status
// line at most every 10 s otherwise (cron, CI; stamped by stderr-lines.ts), nothing with --quiet;
// then the summary (one line for a quiet run that failed).
import cliProgress from 'cli-progress';
import type { EnrichProgress } from '../run/enrich-options.js';
import type { EnrichSummary } from '../run/summary.js';
import { formatDuration } from '../core/duration.js';
import type { CliIo } from './io.js';

export interface ProgressView {
  update(progress: EnrichProgress): void;
  stop(): void;
}

const PLAIN_EVERY_MS = 10_000;

function counts(p: EnrichProgress): string {
  const down = p.apiUnavailableSince === undefined ? '' : `API unavailable since ${clockTime(p.apiUnavailableSince)}; `;
  return `${down}found ${p.found}, not found ${p.notFound}, errors ${p.errors}, skipped ${p.skipped}, credits ${p.creditsSpent}`;
}

/** HH:MM:SS in local time. */
function clockTime(epochMs: number): string {
  return new Date(epochMs).toTimeString().slice(0, 8);
}

/**
 * The total rows, estimated from the share of the file read so far (exact once it is all read);
 * undefined for stdin. Progress counts rows written, not bytes read: the reader runs ahead.
 */
function estimatedRows(p: EnrichProgress): number | undefined {
  if (!p.totalBytes || p.bytesRead <= 0 || p.rowsRead <= 0) return undefined;
  return Math.max(p.rowsRead, Math.round((p.rowsRead * p.totalBytes) / p.bytesRead));
}

/**
 * Rows per minute of rows looked up: rows the store answered take no time and would make a
 * resumed run look fast until its first request.
 */
function lookupRate(p: EnrichProgress): number {
  return p.elapsedMs > 0 ? Math.round((p.rowsLookedUp * 60_000) / p.elapsedMs) : 0;
}

/** Time left at the pace so far: always a finite, well-formed duration, or '?' before the first row. */
export function etaOf(p: EnrichProgress): string {
  const total = estimatedRows(p);
  if (!total || p.rowsDone <= 0 || p.elapsedMs <= 0) return '?';
  if (p.rowsDone >= total) return '0s';
  // Whole seconds: an estimate to the millisecond ("8s 982ms") only looks precise.
  const seconds = Math.max(1, Math.round(((p.elapsedMs / p.rowsDone) * (total - p.rowsDone)) / 1000));
  return formatDuration(seconds * 1000);
}

export function progressView(io: CliIo, say: (line: string) => void, mode: 'bar' | 'plain' | 'quiet'): ProgressView {
  if (mode === 'quiet') return { update() {}, stop() {} };
  if (mode === 'plain') return plainView(say);
  const bar = new cliProgress.SingleBar(
    {
      // Our own rate and ETA: cli-progress's `eta_formatted` reads "NFs" or "4m60s" at times.
      format: ' {bar} {percentage}% | {value}/{total} rows | {rate} looked up/min | ETA {eta} | {counts}',
      hideCursor: true,
      stream: process.stderr,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(p) {
      const total = estimatedRows(p) ?? Math.max(1, p.rowsRead);
      const payload = { rate: lookupRate(p), eta: etaOf(p), counts: counts(p) };
      if (!started) {
        bar.start(total, Math.min(p.rowsDone, total), payload);
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(Math.min(p.rowsDone, total), payload);
      }
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

/** Without a terminal: a status line at most every PLAIN_EVERY_MS (stamped by `say`). */
function plainView(say: (line: string) => void): ProgressView {
  let last = Date.now();
  return {
    update(p) {
      if (Date.now() - last < PLAIN_EVERY_MS) return;
      last = Date.now();
      const total = estimatedRows(p);
      const percent = total ? ` of about ${total} (${Math.floor((100 * p.rowsDone) / total)}%)` : '';
      const eta = etaOf(p);
      say(`lead-enrich: ${p.rowsDone} rows done${percent}, ${lookupRate(p)} rows/min looked up${eta === '?' ? '' : `, ETA ${eta}`}; ${counts(p)}`);
    },
    stop() {},
  };
}

/** One line, for `-q` runs that did not exit 0: what happened and where to look. */
export function oneLineSummary(s: EnrichSummary): string {
  const why =
    s.stoppedBy === 'max_errors'
      ? 'stopped at --max-errors'
      : s.stoppedBy === 'credits'
        ? 'stopped at the credit reserve'
        : s.stoppedBy === 'interrupt'
          ? 'interrupted'
          : s.stoppedBy === 'redis'
            ? 'Redis was lost'
            : s.stoppedBy === 'api_unavailable'
              ? `the API stayed unavailable past --patience (${formatDuration(s.patienceMs)})`
              : `${s.status.error} rows are errors`;
  const codes = Object.entries(s.errorCodes).map(([code, n]) => `${code} ${n}`).join(', ');
  const where = s.errorsFile ? `; see ${s.errorsFile}` : '';
  return `${why}: ${s.rows} rows (found ${s.status.found}, not found ${s.status.not_found}, errors ${s.status.error}, skipped ${s.status.skipped})${codes ? `; ${codes}` : ''}${where}`;
}

export function formatSummary(s: EnrichSummary): string {
  const lines = [
    `Rows: ${s.rows} (found ${s.status.found}, not found ${s.status.not_found}, errors ${s.status.error}, skipped ${s.status.skipped})`,
    `Billing: charged ${s.billing.charged}, free ${s.billing.free}, cached ${s.billing.cached}, duplicate ${s.billing.duplicate}, none ${s.billing.none}`,
    ...Object.entries(s.withBilling ?? {}).map(([extra, b]) => `Billing of --with ${extra}: charged ${b.charged}, free ${b.free}, cached ${b.cached}, duplicate ${b.duplicate}, none ${b.none}`),
    `Requests: ${s.requests} (retries ${s.retries}, rate-limited ${s.rateLimited}) at up to ${s.rpm} RPM`,
    `Credits: ${s.credits.before} before, ${s.credits.after} after${s.credits.exact ? '' : ' (estimated)'}, ${s.credits.spent} spent, reserve ${s.credits.reserve}`,
    ...(s.credits.exact && s.credits.fell > s.credits.spent
      ? [`The balance fell by ${s.credits.fell}; this run spent ${s.credits.spent}: another client uses the account`]
      : []),
    `Time: ${formatDuration(s.elapsedMs)} (${s.rowsPerMinute} rows/min)`,
  ];
  const fill = fillLine(s);
  if (fill) lines.push(fill);
  const codes = Object.entries(s.errorCodes);
  if (codes.length > 0) lines.push(`Error codes: ${codes.map(([code, n]) => `${code} ${n}`).join(', ')}`);
  if (s.foundBy && Object.keys(s.foundBy).length > 1) lines.push(`Found by: ${Object.entries(s.foundBy).map(([kind, n]) => `${kind} ${n}`).join(', ')}`);
  if (s.invalidUtf8Cells > 0) lines.push(`Input cells with bytes that are not UTF-8 (copied unchanged): ${s.invalidUtf8Cells}`);
  if (s.output && s.output !== '-') lines.push(`Output: ${s.output}`);
  if (s.errorsFile) lines.push(`Errors and skipped rows: ${s.errorsFile}`);
  if (s.report) lines.push(`Report: ${s.report}`);
  if (s.stoppedBy === 'credits') lines.push('Stopped early: the credit reserve was reached; add credits and run the same command again to finish.');
  if (s.stoppedBy === 'redis') lines.push('Stopped early: Redis was lost; the rows not looked up are marked redis_unavailable. Run the same command again.');
  if (s.shard) lines.push(`Shard: ${s.shard.index} of ${s.shard.count} (only this shard's rows are in the outputs)`);
  if (s.stoppedBy === 'interrupt') lines.push('Interrupted: run the same command again to finish; answers already paid for are reused.');
  if (s.stoppedBy === 'max_errors') lines.push('Stopped at --max-errors: too many lookups failed (see the sidecar); fix the cause and run the same command again.');
  if (s.apiUnavailableMs > 0 && s.stoppedBy !== 'api_unavailable') lines.push(`The API was unavailable for ${formatDuration(s.apiUnavailableMs)} in all; the rows waited for it.`);
  if (s.stoppedBy === 'api_unavailable') {
    lines.push(`Stopped: the API stayed unavailable (waited ${formatDuration(s.apiUnavailableMs)}, --patience ${formatDuration(s.patienceMs)}); the rows not looked up are skipped with api_unavailable. Run the same command again to finish.`);
  }
  return lines.join('\n');
}

/** The one line of fill rates: each added column's share of the found rows holding a value (and --fill's cells). */
function fillLine(s: EnrichSummary): string | undefined {
  const rates = Object.entries(s.fillRates ?? {});
  const filled = Object.entries(s.filled ?? {});
  if (rates.length === 0 && filled.length === 0) return undefined;
  const found = s.status.found;
  const share = (n: number) => (found > 0 ? `${Math.round((100 * n) / found)} %` : '-');
  const parts = rates.length ? `Fill rate of the ${found} rows found: ${rates.map(([name, n]) => `${name} ${share(n)}`).join(', ')}` : 'Fill rate: no column an answer fills';
  return filled.length ? `${parts}; cells filled: ${filled.map(([column, n]) => `${column} ${n}`).join(', ')}` : parts;
}

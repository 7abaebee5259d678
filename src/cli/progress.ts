// How a run tells the user how it goes: a progress bar on a TTY (cli-progress), a plain status
// line at most every 10 s otherwise (cron, CI), nothing with --quiet.
import cliProgress from 'cli-progress';
import type { EnrichProgress, EnrichSummary } from '../pipeline/enrich.js';
import { formatDuration } from '../store/duration.js';
import type { CliIo } from './io.js';

export interface ProgressView {
  update(progress: EnrichProgress): void;
  stop(): void;
}

const PLAIN_EVERY_MS = 10_000;

function counts(p: EnrichProgress): string {
  return `found ${p.found}, not found ${p.notFound}, errors ${p.errors}, skipped ${p.skipped}, credits ${p.creditsSpent}`;
}

function eta(p: EnrichProgress): string {
  if (!p.totalBytes || p.bytesRead <= 0 || p.bytesRead >= p.totalBytes) return '';
  const remaining = (p.elapsedMs / p.bytesRead) * (p.totalBytes - p.bytesRead);
  return `, ETA ${formatDuration(remaining)}`;
}

export function progressView(io: CliIo, mode: 'bar' | 'plain' | 'quiet'): ProgressView {
  if (mode === 'quiet') return { update() {}, stop() {} };
  if (mode === 'plain') {
    let last = Date.now();
    return {
      update(p) {
        if (Date.now() - last < PLAIN_EVERY_MS) return;
        last = Date.now();
        const rate = p.elapsedMs > 0 ? Math.round((p.rowsDone * 60_000) / p.elapsedMs) : 0;
        const percent = p.totalBytes ? ` (${Math.floor((100 * p.bytesRead) / p.totalBytes)}% of input)` : '';
        io.err(`lead-enrich: ${p.rowsDone} rows done${percent}, ${rate} rows/min${eta(p)}; ${counts(p)}`);
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      format: ' {bar} {percentage}% | {rows} rows | {rate} rows/min | ETA {eta_formatted} | {counts}',
      hideCursor: true,
      stream: process.stderr,
      clearOnComplete: false,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(p) {
      const total = p.totalBytes ?? Math.max(1, p.bytesRead);
      const payload = {
        rows: p.rowsDone,
        rate: p.elapsedMs > 0 ? Math.round((p.rowsDone * 60_000) / p.elapsedMs) : 0,
        counts: counts(p),
      };
      if (!started) {
        bar.start(total, Math.min(p.bytesRead, total), payload);
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(Math.min(p.bytesRead, total), payload);
      }
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

export function formatSummary(s: EnrichSummary): string {
  const lines = [
    `Rows: ${s.rows} (found ${s.status.found}, not found ${s.status.not_found}, errors ${s.status.error}, skipped ${s.status.skipped})`,
    `Billing: charged ${s.billing.charged}, free ${s.billing.free}, cached ${s.billing.cached}, duplicate ${s.billing.duplicate}, none ${s.billing.none}`,
    `Requests: ${s.requests} (retries ${s.retries}, rate-limited ${s.rateLimited}) at up to ${s.rpm} RPM`,
    `Credits: ${s.credits.before} before, ${s.credits.after} after${s.credits.exact ? '' : ' (estimated)'}, ${s.credits.spent} spent, reserve ${s.credits.reserve}`,
    `Time: ${formatDuration(s.elapsedMs)} (${s.rowsPerMinute} rows/min)`,
  ];
  const codes = Object.entries(s.errorCodes);
  if (codes.length > 0) lines.push(`Error codes: ${codes.map(([code, n]) => `${code} ${n}`).join(', ')}`);
  if (s.output && s.output !== '-') lines.push(`Output: ${s.output}`);
  if (s.errorsFile) lines.push(`Errors and skipped rows: ${s.errorsFile}`);
  if (s.stoppedBy === 'credits') lines.push('Stopped early: the credit reserve was reached; add credits and run the same command again to finish.');
  if (s.stoppedBy === 'redis') lines.push('Stopped early: Redis was lost; the rows not looked up are marked redis_unavailable. Run the same command again.');
  if (s.shard) lines.push(`Shard: ${s.shard.index} of ${s.shard.count} (only this shard's rows are in the outputs)`);
  if (s.stoppedBy === 'interrupt') lines.push('Interrupted: run the same command again to finish; answers already paid for are reused.');
  return lines.join('\n');
}

// What the progress line and the one-line summary say (src/cli/progress.ts): a finite,
// well-formed ETA, the rate of rows looked up (not of rows the store answered), stamped lines
// without a terminal.
import { describe, expect, it } from 'vitest';
import { etaOf, oneLineSummary, progressView } from '../src/cli/progress.js';
import { stderrLines } from '../src/cli/stderr-lines.js';
import type { EnrichProgress } from '../src/run/enrich-options.js';
import type { EnrichSummary } from '../src/run/summary.js';

const progress = (p: Partial<EnrichProgress>): EnrichProgress => ({
  rowsRead: 0,
  rowsDone: 0,
  rowsLookedUp: 0,
  found: 0,
  notFound: 0,
  errors: 0,
  skipped: 0,
  requests: 0,
  rateLimited: 0,
  creditsSpent: 0,
  bytesRead: 0,
  totalBytes: undefined,
  elapsedMs: 0,
  ...p,
});

describe('ETA', () => {
  it('is "?" before the first row, never NaN or Infinity', () => {
    expect(etaOf(progress({ rowsRead: 10, bytesRead: 100, totalBytes: 1000 }))).toBe('?');
    expect(etaOf(progress({ rowsRead: 10, rowsDone: 5, bytesRead: 100, totalBytes: 1000, elapsedMs: 0 }))).toBe('?');
    expect(etaOf(progress({}))).toBe('?');
  });

  it('is a well-formed duration at the pace so far (no "4m60s")', () => {
    // 100 of about 1000 rows in 29.999 s: 900 more at that pace is 269.99 s, shown to the second.
    const eta = etaOf(progress({ rowsRead: 100, rowsDone: 100, bytesRead: 1000, totalBytes: 10_000, elapsedMs: 29_999 }));
    expect(eta).toBe('4m 30s');
    for (let ms = 1; ms < 400_000; ms += 997) {
      const text = etaOf(progress({ rowsRead: 10, rowsDone: 10, bytesRead: 10, totalBytes: 100, elapsedMs: ms }));
      expect(text).toMatch(/^(\d+d )?(\d+h ?)?(\d+m ?)?(\d+s)?(\d+ms)?$/);
      expect(text).not.toMatch(/60s|60m|NaN|Infinity/);
    }
  });
});

describe('plain progress lines', () => {
  it('count the rate of rows looked up, not of rows the store answered, and are stamped', () => {
    const lines: string[] = [];
    const io = { out: () => {}, err: (line: string) => lines.push(line), setStatus: () => {}, isTty: false };
    const view = progressView(io, stderrLines(io, () => new Date('2026-11-23T10:00:00.000Z')), 'plain');
    // The first update comes only after the 10-s interval: simulate it by a run 11 s old.
    const realNow = Date.now;
    Date.now = () => realNow() + 11_000;
    try {
      view.update(progress({ rowsRead: 1000, rowsDone: 1000, rowsLookedUp: 60, elapsedMs: 60_000, bytesRead: 1, totalBytes: 2 }));
    } finally {
      Date.now = realNow;
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^2026-11-23T10:00:00\.000Z lead-enrich: 1000 rows done of about 2000 \(50%\), 60 rows\/min looked up, ETA 1m/);
  });
});

describe('the one-line summary of a quiet run that failed', () => {
  it('says why, the counts, the codes and where the sidecar is', () => {
    const summary = {
      rows: 500,
      status: { found: 0, not_found: 0, error: 12, skipped: 488 },
      errorCodes: { server_error: 12, max_errors: 488 },
      errorsFile: '/data/in.enriched.errors.csv',
      stoppedBy: 'max_errors',
    } as unknown as EnrichSummary;
    expect(oneLineSummary(summary)).toBe(
      'stopped at --max-errors: 500 rows (found 0, not found 0, errors 12, skipped 488); server_error 12, max_errors 488; see /data/in.enriched.errors.csv',
    );
  });
});

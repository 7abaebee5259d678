// What the progress says while a run goes (src/cli/progress*.ts): a total that is an estimate
// until the input is read, a percentage that never goes back and is 100 only at the last row, an
// ETA that is always a duration with a unit, the rate of rows looked up over the time spent
// looking up, a terminal line that fits the terminal's width (fields dropped by rank) and is
// redrawn on resize, plain lines stamped and paced; and the one-line summary.
import { describe, expect, it } from 'vitest';
import { ProgressModel, type ProgressFrame } from '../../src/cli/progress-model.js';
import { plainLine, terminalLine } from '../../src/cli/progress-line.js';
import { progressView, type TerminalStream } from '../../src/cli/progress.js';
import { stderrLines } from '../../src/cli/stderr-lines.js';
import { oneLineSummary } from '../../src/cli/summary-text.js';
import type { EnrichProgress } from '../../src/run/enrich-options.js';
import type { EnrichSummary } from '../../src/run/summary.js';

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

/** A model on a clock the test moves. */
function clocked(): { model: ProgressModel; at: (ms: number) => void } {
  let now = 0;
  return { model: new ProgressModel(() => now), at: (ms) => (now = ms) };
}

const UNIT_DURATION = /^(\d+h )?(\d+m )?\d+[hms]$|^\d+h( \d+m)?$|^\d+m( \d+s)?$/;

describe('the progress model', () => {
  it('never lets the percentage go back when the estimate grows, and says 100 only at the last row, once the total is exact', () => {
    const { model, at } = clocked();
    const seen: number[] = [];
    const steps: Array<[number, number, boolean]> = [
      [100, 500, false], // 20 %
      [150, 1000, false], // 15 %: the estimate grew; held at 20
      [400, 1000, false],
      [990, 1000, false], // 99, not 100: an estimate may be short
      [1000, 1020, false],
      [1020, 1020, true],
    ];
    steps.forEach(([done, total, exact], i) => {
      at(i * 1000);
      seen.push(model.frame(progress({ rowsDone: done, rowsRead: done, totalRows: total, totalExact: exact })).percent!);
    });
    expect(seen).toEqual([20, 20, 40, 99, 99, 100]);
  });

  it('never shows a total below the rows read', () => {
    const { model } = clocked();
    expect(model.frame(progress({ rowsDone: 10, rowsRead: 700, totalRows: 511 })).total).toBe(700);
  });

  it('has no total, percentage or ETA without an estimate (stdin, gzip), only the rows done', () => {
    const { model, at } = clocked();
    model.frame(progress({ rowsDone: 0 }));
    at(5000);
    const frame = model.frame(progress({ rowsDone: 500, rowsRead: 600 }));
    expect(frame).toMatchObject({ total: undefined, percent: undefined, etaMs: undefined, done: 500 });
    expect(plainLine(frame)).toMatch(/^lead-enrich: 500 rows done, /);
  });

  it('estimates the time left at the pace of the last half minute, in whole seconds with a unit', () => {
    const { model, at } = clocked();
    // 10 rows a second for a minute, then 1 row a second: the ETA follows the new pace.
    for (let s = 0; s <= 60; s += 1) {
      at(s * 1000);
      model.frame(progress({ rowsDone: 10 * s, rowsRead: 10 * s, totalRows: 10_000 }));
    }
    at(61_000);
    expect(model.frame(progress({ rowsDone: 610, rowsRead: 610, totalRows: 10_000 })).etaMs).toBe(939_000);
    for (let s = 62; s <= 100; s += 1) {
      at(s * 1000);
      model.frame(progress({ rowsDone: 610 + (s - 61), rowsRead: 700, totalRows: 10_000 }));
    }
    const frame = model.frame(progress({ rowsDone: 649, rowsRead: 700, totalRows: 10_000 }));
    expect(frame.etaMs! / 1000).toBeCloseTo(9351, -2);
    expect(plainLine(frame)).toMatch(/ETA 2h 35m/);
  });

  it('shows no ETA until rows move, and 0s once the last row is written', () => {
    const { model, at } = clocked();
    expect(model.frame(progress({ rowsDone: 0, totalRows: 100 })).etaMs).toBeUndefined();
    at(10_000);
    expect(model.frame(progress({ rowsDone: 0, totalRows: 100 })).etaMs).toBeUndefined();
    at(11_000);
    expect(model.frame(progress({ rowsDone: 100, rowsRead: 100, totalRows: 100, totalExact: true })).etaMs).toBe(0);
  });

  it('every ETA it writes has a unit: never "ETA 60", NaN or Infinity', () => {
    const { model, at } = clocked();
    for (let s = 1; s < 400; s += 7) {
      at(s * 997);
      const frame = model.frame(progress({ rowsDone: s, rowsRead: s, totalRows: 5000 }));
      const eta = /ETA ([^,]+),/.exec(plainLine(frame))?.[1];
      if (eta !== undefined) expect(eta).toMatch(UNIT_DURATION);
    }
  });

  it('counts the rate of rows looked up over the time spent looking up: 27 lookups in 2.7 s are 10 rows/s, whatever the rows the store answered', () => {
    const { model } = clocked();
    const frame = model.frame(progress({ rowsDone: 5000, rowsRead: 5000, rowsLookedUp: 27, lookupMs: 2700, elapsedMs: 3000 }));
    expect(frame.rowsPerSecond).toBeCloseTo(10);
    // A handful of answers within a millisecond is no rate of thousands a second.
    expect(model.frame(progress({ rowsLookedUp: 3, lookupMs: 1 })).rowsPerSecond).toBe(3);
  });
});

const busy: ProgressFrame = {
  done: 12_345,
  total: 250_000,
  exact: false,
  percent: 4,
  etaMs: 3_725_000,
  rowsPerSecond: 9.87,
  inFlight: 12,
  found: 11_000,
  notFound: 1_200,
  errors: 45,
  skipped: 100,
  credits: 44_000,
  apiUnavailableSince: Date.parse('2026-11-23T10:00:00Z'),
  rateLimitedUntil: undefined,
};

describe('the terminal line', () => {
  it('fits every width from 20 to 200 columns, leaving the last column free', () => {
    for (let columns = 20; columns <= 200; columns += 1) {
      expect(terminalLine(busy, columns).length, `${columns} columns`).toBeLessThan(columns);
    }
  });

  it('drops the least important slots first (the counts, in flight, the bar, the credits, the pace); the rows done stay', () => {
    const at = (columns: number) => terminalLine(busy, columns);
    expect(at(230)).toMatch(
      /^  4% [█░]+  12345\/~250000 rows \| API unavailable since \d\d:\d\d:\d\d \| 44000 credits spent +\| 12 in flight +\| found 11000, not found 1200, errors 45, skipped 100$/,
    );
    expect(at(80)).toMatch(/^  4%  12345\/~250000 rows \| API unavailable since \d\d:\d\d:\d\d$/);
    expect(at(100)).toMatch(/^  4% (?:[█░]+ )? 12345\/~250000 rows \| API unavailable since \d\d:\d\d:\d\d \| 44000 credits spent$/);
    const going = { ...busy, apiUnavailableSince: undefined };
    expect(terminalLine(going, 90)).toBe('  4%  12345/~250000 rows | 9.9 rows/s   | ETA 1h 2m       | 44000 credits spent');
    // A 429 paused the run (an --rpm above the account's limit): the line says why no row moves.
    const paused = { ...going, rateLimitedUntil: Date.parse('2026-11-23T10:01:00Z') };
    expect(terminalLine(paused, 90)).toMatch(/^  4%  12345\/~250000 rows \| rate-limited until \d\d:\d\d:\d\d +\| 44000 credits spent$/);
    expect(plainLine(paused)).toMatch(
      /^lead-enrich: 12345 rows done of about 250000 \(4%\), rate-limited until \d\d:\d\d:\d\d, ETA 1h 2m, .*; 44000 credits spent$/,
    );
    expect(at(40)).toMatch(/^  4%  12345\/~250000 rows$/);
    expect(at(20).length).toBeLessThan(20);
  });

  it('keeps every field in its place from frame to frame: the ETA, an outage, lookups in flight and errors coming and going move nothing', () => {
    const frames: ProgressFrame[] = [
      { ...busy, done: 5, percent: 0, etaMs: undefined, rowsPerSecond: 0, inFlight: 0, errors: 0, credits: 8, apiUnavailableSince: undefined },
      { ...busy, done: 950, percent: 0, etaMs: 65_000, rowsPerSecond: 9.96, inFlight: 3, errors: 0, credits: 990, apiUnavailableSince: undefined },
      { ...busy, done: 1000, percent: 0, etaMs: 64_000, rowsPerSecond: 10, inFlight: 0, errors: 2, credits: 1004, apiUnavailableSince: undefined },
      { ...busy, done: 12_345, percent: 4 },
      { ...busy, done: 12_346, percent: 4, rateLimitedUntil: Date.parse('2026-11-23T10:01:00Z'), apiUnavailableSince: undefined },
    ];
    for (const columns of [80, 100, 120, 160, 230]) {
      const lines = frames.map((frame) => terminalLine(frame, columns));
      const starts = (line: string) => [...line.matchAll(/\| (?=\S)/g)].map((m) => m.index).filter((i) => !/\| ETA/.test(line.slice(i, i + 5)));
      const first = starts(lines[0]!);
      for (const line of lines) expect(starts(line), `${columns} columns:\n${lines.join('\n')}`).toEqual(first);
      // One format for the rate: 9.96 and 10 are both "10.0 rows/s".
      expect(lines[1]!.includes('10.0 rows/s') || !lines[1]!.includes('rows/s')).toBe(true);
      expect(lines.join('\n')).not.toMatch(/\b10 rows\/s/);
    }
  });

  it('labels the credits as spent, in the terminal line and the plain line alike', () => {
    expect(terminalLine({ ...busy, apiUnavailableSince: undefined }, 120)).toContain('| 44000 credits spent');
    expect(plainLine(busy)).toMatch(/; 44000 credits spent$/);
  });

  it('is redrawn in place on resize, at the new width, and ends with a newline', () => {
    const written: string[] = [];
    const listeners: Array<() => void> = [];
    const stream: TerminalStream & { columns: number } = {
      columns: 120,
      write: (text: string) => written.push(text),
      on: (_event, listener) => listeners.push(listener),
      off: (_event, listener) => listeners.splice(listeners.indexOf(listener), 1),
    };
    const view = progressView(() => {}, { kind: 'terminal', stream });
    view.update(
      progress({ rowsDone: 500, rowsRead: 1000, totalRows: 2000, rowsLookedUp: 500, lookupMs: 10_000, found: 450, notFound: 50, creditsSpent: 1800 }),
    );
    expect(written.at(-1)).toMatch(/^\r 25% .*\x1b\[K$/);
    stream.columns = 40;
    for (const listener of listeners) listener();
    const redrawn = written.at(-1)!;
    expect(redrawn.startsWith('\r')).toBe(true);
    expect(redrawn.replace(/^\r|\x1b\[K$/g, '').length).toBeLessThan(40);
    view.print('lead-enrich: a warning');
    expect(written.slice(-2)).toEqual(['\r\x1b[Klead-enrich: a warning\n', expect.stringMatching(/^\r 25% /)]);
    view.stop();
    expect(written.at(-1)).toBe('\n');
    expect(listeners).toHaveLength(0);
  });
});

describe('plain progress lines', () => {
  it('are stamped, say "of about N" for an estimate and "of N" once exact, and count rows looked up per second', () => {
    const lines: string[] = [];
    const io = { out: () => {}, err: (line: string) => lines.push(line), setStatus: () => {}, isTty: false };
    let now = 0;
    const view = progressView(
      stderrLines(io, () => new Date('2026-11-23T10:00:00.000Z')),
      { kind: 'plain' },
      () => now,
    );
    now = 11_000;
    view.update(progress({ rowsRead: 1000, rowsDone: 1000, rowsLookedUp: 60, lookupMs: 60_000, totalRows: 2000 }));
    now = 22_000;
    view.update(progress({ rowsRead: 2000, rowsDone: 2000, rowsLookedUp: 120, lookupMs: 120_000, totalRows: 2000, totalExact: true, final: true }));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^2026-11-23T10:00:00\.000Z lead-enrich: 1000 rows done of about 2000 \(50%\), 1\.0 rows\/s looked up; found 0, not found 0, errors 0, skipped 0; 0 credits spent$/,
    );
    expect(lines[1]).toMatch(/lead-enrich: 2000 rows done of 2000 \(100%\), ETA 0s, /);
  });

  it('begin after 10 s (a run that fails at once keeps its one line), then come every 10 s and at each tenth but never within a second of each other; the last frame once any was written', () => {
    const lines: string[] = [];
    let now = 0;
    const view = progressView(
      (line) => lines.push(`${now} ${line}`),
      { kind: 'plain' },
      () => now,
    );
    const at = (ms: number, done: number, exact = false, final = false) => {
      now = ms;
      view.update(progress({ rowsRead: done, rowsDone: done, totalRows: 1000, totalExact: exact, final }));
    };
    at(1000, 150); // tenths, but no line yet
    at(5000, 390);
    at(10_000, 400); // 10 s: the first line
    at(10_500, 520); // a new tenth, within a second
    at(11_000, 530); // a line
    at(12_000, 535); // same tenth: none
    at(22_000, 540); // 10 s: a line
    at(22_500, 1000, true); // 100 % before the run's last snapshot: left to it (other credits)
    at(23_000, 1000, true, true); // the last snapshot, whatever the time
    at(23_200, 1000, true, true); // said once
    expect(lines.map((l) => /^(\d+) .* (\d+) rows done/.exec(l)!.slice(1, 3).join(':'))).toEqual(['10000:400', '11000:530', '22000:540', '23000:1000']);
  });

  it('say nothing for a short run that never reached a line', () => {
    const lines: string[] = [];
    let now = 0;
    const view = progressView(
      (line) => lines.push(line),
      { kind: 'plain' },
      () => now,
    );
    now = 300;
    view.update(progress({ rowsRead: 10, rowsDone: 10, totalRows: 10, totalExact: true }));
    expect(lines).toEqual([]);
  });
});

describe('the one-line summary of a quiet run that failed', () => {
  it('says why, the counts, the codes and where the sidecar is', () => {
    const summary = {
      rows: 500,
      status: { found: 0, not_found: 0, error: 12, skipped: 488 },
      errorCodes: { server_error: 12, max_errors: 488 },
      skipReasons: { max_errors: 488 },
      errorsFile: '/data/in.enriched.errors.csv',
      stoppedBy: 'max_errors',
    } as unknown as EnrichSummary;
    expect(oneLineSummary(summary)).toBe(
      'stopped at --max-errors: 500 rows (found 0, not found 0, errors 12, skipped 488); server_error 12; skipped: max_errors 488; see /data/in.enriched.errors.csv',
    );
  });

  it('never calls complete rows errors, and says "1 row"', () => {
    const summary = {
      rows: 247,
      status: { found: 0, not_found: 0, error: 1, skipped: 246 },
      errorCodes: { server_error: 1, complete: 246 },
      skipReasons: { complete: 246 },
      billing: { charged: 0, free: 0, cached: 0, duplicate: 0, none: 247 },
      fileErrors: 0,
      errorsFile: '/data/crm.enriched.errors.csv',
      stoppedBy: undefined,
    } as unknown as EnrichSummary;
    expect(oneLineSummary(summary)).toBe(
      '1 row is an error: 247 rows (found 0, not found 0, errors 1, skipped 246); server_error 1; skipped: complete 246; see /data/crm.enriched.errors.csv',
    );
  });
});

// rate: how much of the account's rate limit a long run uses, and whether it ever trips it.
// Sandbox at 600 RPM in fixed windows of 60 s, latency 50–150 ms; enrich with its default tuning
// (only tuning.windowMs set, equal to the sandbox's) in a child process, on an input far larger
// than the measured span. The figure comes from the SERVER's own per-window counts
// (sandbox.stats.windows[].accepted: every request it accepted in that window, lookups and
// account calls alike). Counted windows: the full windows that began after the run started and
// ended before it was stopped; the window in which the run starts (start-up, account reads) and
// the one in which it is stopped are partial and ignored.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSandbox } from '../../dist/sandbox/index.js';
import { contactsCsv } from '../lib/data.js';
import { OUT_DIR, log, median, min, pct, removeStore, runNode, sleep } from '../lib/util.js';

export const name = 'rate';
export const title = 'rate';

/**
 * Does enrich() keep its process alive while every job waits for the next rate window? A tiny
 * run (5 per 0.5-s window, no latency, 12 rows: 15 requests) in a runner whose own timer is unref'd.
 * A process that exits with status 13 ("unsettled top-level await") died mid-run.
 */
async function livenessCheck() {
  const sandbox = await startSandbox({ rpm: 5, windowMs: 500, credits: 1_000_000, threshold: 0 });
  const store = path.join(os.tmpdir(), `lead-enrich-bench-live-${process.pid}.sqlite`);
  const output = path.join(OUT_DIR, 'live.enriched.csv');
  removeStore(store);
  try {
    const r = await runNode(
      [
        'bench/lib/enrich-runner.js',
        JSON.stringify({ input: contactsCsv(12), output, store, baseUrl: sandbox.baseUrl, token: sandbox.token, tuning: { windowMs: 500 }, keepAlive: false }),
      ],
      { timeoutMs: 60_000 },
    );
    let rows;
    try {
      rows = JSON.parse(r.stdout.trim().split('\n').pop()).rows;
    } catch {
      rows = undefined;
    }
    const ok = r.code === 0 && rows === 12;
    return {
      ok,
      text: ok
        ? 'passed: a run that waits for the next window with nothing in flight finished (12 rows, 15 requests at 5 per 0.5-s window)'
        : `**FAILED**: a 12-row run at 5 requests per 0.5-s window, in a process with no other work, ended with exit status ${r.code ?? r.signal} after ${(r.wallMs / 1000).toFixed(1)} s having written ${rows ?? 'no'} rows (13 = Node's "unsettled top-level await": the event loop emptied while enrich() was pending, because every timer it holds while waiting for the next window is unref'd). The CLI does the same (\`lead-enrich enrich\` exits 13 silently with partial temp files when the window budget runs out before the edge). The bench's own runner keeps a ref'd timer, so the figures below are not affected.`,
    };
  } finally {
    await sandbox.close();
    removeStore(store);
    fs.rmSync(output, { force: true });
    fs.rmSync(output.replace(/\.csv$/, '.errors.csv'), { force: true });
  }
}

export async function run({ quick }) {
  const live = await livenessCheck();
  log(`rate: liveness check ${live.ok ? 'passed' : 'FAILED (exit 13 mid-run)'}`);
  const rpm = 600;
  const windowMs = quick ? 6_000 : 60_000;
  // --quick shrinks time 10-fold; the gate's edge margin (default 250 ms, lost once per window)
  // is shrunk with it, so the quick run models the full one. The full run uses default tuning.
  const tuning = quick ? { windowMs, edgeMarginMs: Math.round((250 * windowMs) / 60_000) } : { windowMs };
  const fullWindows = 3;
  const latencyMs = [50, 150];
  // Enough rows never to run dry: the run is stopped after the counted windows.
  const input = contactsCsv(10_000);
  const sandbox = await startSandbox({ rpm, windowMs, latencyMs, credits: 1_000_000_000, threshold: 0 });
  const store = path.join(os.tmpdir(), `lead-enrich-bench-rate-${process.pid}.sqlite`);
  removeStore(store);
  const output = path.join(OUT_DIR, 'rate.enriched.csv');
  try {
    // Windows are aligned to the sandbox's start, i.e. to now (within a millisecond or two).
    const firstWindowStart = Date.now();
    log(
      `rate: ${rpm} RPM, windows of ${windowMs / 1000} s, latency ${latencyMs.join('-')} ms: ${fullWindows} full windows, about ${Math.round(((fullWindows + 1) * windowMs + 1000) / 1000)} s`,
    );
    const running = runNode(['bench/lib/enrich-runner.js', JSON.stringify({ input, output, store, baseUrl: sandbox.baseUrl, token: sandbox.token, tuning })]);
    // The child is only a load generator here: the server's counts are the measurement. Stop it
    // once the last counted window has closed (plus a little): windows 1..fullWindows after the
    // starting window 0.
    const settled = running.catch((error) => error);
    await sleep(Math.max(0, firstWindowStart + (fullWindows + 1) * windowMs + 300 - Date.now()));
    const stoppedAt = Date.now();
    const snapshot = sandbox.stats.windows.map((w) => ({ ...w }));
    const rateLimitedTotal = sandbox.stats.rateLimited;
    const totalRequests = sandbox.stats.requests;
    running.child.kill('SIGTERM');
    const child = await settled;
    if (child.code !== null && child.code !== 0)
      throw new Error(`rate: the enrich child exited ${child.code} before the end of the measured windows:\n${child.stderr.slice(-1500)}`);

    const windowStart0 = snapshot[0]?.start ?? firstWindowStart;
    const counted = [];
    for (let i = 1; i <= fullWindows; i++) {
      const start = windowStart0 + i * windowMs;
      if (start + windowMs > stoppedAt) break;
      const w = snapshot.find((x) => x.start === start) ?? { start, requests: 0, accepted: 0, limited: 0 };
      counted.push(w);
    }
    if (counted.length < fullWindows) throw new Error(`rate: only ${counted.length} full windows were observed`);
    const ratios = counted.map((w) => w.accepted / rpm);
    const limited = counted.reduce((s, w) => s + w.limited, 0);
    const figure = median(ratios);
    const met = figure >= 0.98 && rateLimitedTotal === 0;
    return {
      scenario: 'rate',
      figure: `${pct(figure)} of RPM per window (median of ${counted.length}; min ${pct(min(ratios))}); ${rateLimitedTotal} × 429`,
      target: '≥ 98 % (median window), zero 429',
      comparison: `the limit itself: ${rpm} per ${windowMs / 1000}-s window; accepted per counted window ${counted.map((w) => w.accepted).join(' / ')}`,
      met,
      notes: [
        `Sandbox: ${rpm} RPM in fixed ${windowMs / 1000}-s windows aligned to the sandbox's start, latency uniform ${latencyMs[0]}–${latencyMs[1]} ms, credits unlimited. enrich in a child process (bench/lib/enrich-runner.js, built library), tuning \`${JSON.stringify(tuning)}\` (windowMs must equal the server's; ${quick ? 'edgeMarginMs scaled with the window, see below' : 'everything else default'}), no --rpm (sized from /account/limits), no --concurrency.`,
        quick
          ? `**--quick: time shrunk 10-fold**: windows of ${windowMs / 1000} s (600 per window, paced ${(windowMs / 600).toFixed(1)} ms apart: still below the gate's 200/s switch to its fast engine, so the same Bottleneck path as the full run) so that 3 full windows fit in ~25 s, and the gate's edge margin shrunk with them (${tuning.edgeMarginMs} ms instead of 250 ms). The margin is idle time after every window edge: left at 250 ms it cost 15 of 600 requests per 10-s window in a trial (97.5 %), against 2.5 of 600 per 60-s window. Same counting as the full run, which uses production-sized windows and default tuning.`
          : 'Full run: production-sized 60-s windows; this scenario alone takes ~4.3 minutes.',
        `How counted: the sandbox records, per window, the requests it accepted (lookups and account calls). The window the run starts in (start-up: two account reads, concurrency ramp) and the one in which the bench stops the run are partial and not counted; the ${counted.length} full windows in between are. Figure = accepted ÷ RPM per window, median (and min) over them. 429s: all sent by the server during the whole run (partial windows included): ${rateLimitedTotal}; in the counted windows: ${limited}.`,
        `Liveness check (process kept alive by enrich() alone while waiting for a window): ${live.text}`,
        `Per window (start offset from the first window, accepted, 429): ${snapshot.map((w) => `+${Math.round((w.start - windowStart0) / 1000)} s: ${w.accepted}${w.limited ? ` (${w.limited} × 429)` : ''}`).join('; ')}. Server total: ${totalRequests} requests.`,
      ],
      raw: { rpm, windowMs, ratios, windows: snapshot, rateLimitedTotal, liveness: live.ok },
      findings: live.ok
        ? []
        : [`enrich() does not keep its process alive while waiting for the next rate window: exit status 13 mid-run (see the rate notes).`],
    };
  } finally {
    await sandbox.close();
    removeStore(store);
    fs.rmSync(output, { force: true });
    fs.rmSync(output.replace(/\.csv$/, '.errors.csv'), { force: true });
  }
}

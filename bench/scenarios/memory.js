// memory: peak RSS of a whole `lead-enrich enrich` process (the CLI users run, with the heap tuning
// it applies to itself: src/cli/heap-tuning.ts), at two input sizes 10× apart, (a) every row
// answered by the pre-filled store, (b) every row looked up from a fast sandbox (fresh store) and
// (c) mixed: every other row known to the store, the rest looked up (issue 16).
// Memory must stay flat: the reorder window, the store's batches and the limiter's queue are
// bounded, so 10× the rows must not mean more memory. Peak RSS = getrusage's ru_maxrss of the
// child process (process.resourceUsage().maxRSS, read by the runner just before it exits).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startSandbox } from '../../dist/sandbox/index.js';
import { contactsCsv, copyStoreFor, prefilledStore } from '../lib/data.js';
import { OUT_DIR, list, log, mb, median, num, pct, removeStore, runNode, seconds } from '../lib/util.js';

export const name = 'memory';

const LIMIT = 150 * 1024 * 1024;

export async function run({ quick }) {
  // Sizes 10× apart (2× in --quick), both past the point where the store's SQLite page cache
  // (8 MiB) is full: below that the cache is still filling and RSS grows with the rows.
  const aSizes = quick ? [100_000, 200_000] : [100_000, 1_000_000];
  // --quick: (b) at one size only.
  const bSmall = quick ? 3_000 : 100_000;
  // The full run looks up 1 M rows in (b) and 500 k in (c): at ~1,500 lookups/s, ~17 minutes.
  const cSizes = quick ? [20_000] : [100_000, 1_000_000];
  const sandbox = await startSandbox({ rpm: 10_000_000, credits: 1_000_000_000_000, threshold: 0 });
  const output = path.join(OUT_DIR, 'memory.enriched.csv');
  const freshStore = path.join(os.tmpdir(), `lead-enrich-bench-memory-${process.pid}.sqlite`);
  const cells = [];
  const notes = [];
  try {
    const enrichOnce = async (rows, mode) => {
      const input = contactsCsv(rows);
      removeStore(freshStore);
      // A copy: the run adds the other half's answers to a mixed store, and the CLI names the
      // service by its base URL (the sandbox's port changes every run), so the copy is renamed.
      if (mode !== 'sandbox') await copyStoreFor(await prefilledStore(rows, { every: mode === 'mixed' ? 2 : 1 }), freshStore, sandbox.baseUrl);
      const started = performance.now();
      const args = ['enrich', input, '-o', output, '--store', freshStore, '--max-age', '100000d', '--base-url', sandbox.baseUrl, '--json', '-q'];
      const r = await runNode(['bench/lib/cli-runner.js', JSON.stringify({ args })], { json: true, env: { LEAD_API_TOKEN: sandbox.token } });
      const j = r.json;
      const summary = JSON.parse(r.stdout.trim().split('\n').slice(0, -1).join('\n'));
      const known = mode === 'store' ? rows : mode === 'mixed' ? Math.ceil(rows / 2) : 0;
      const expected = j.code === 0 && summary.billing.cached === known && summary.requests === rows - known && summary.status.error === 0;
      if (summary.rows !== rows || !expected)
        throw new Error(
          `memory (${mode}, ${rows}): unexpected run: ${JSON.stringify({ code: j.code, rows: summary.rows, billing: summary.billing, requests: summary.requests, status: summary.status })}`,
        );
      return { rss: j.maxRssBytes, quartiles: j.rssQuartiles, atPeak: j.atPeak, wallMs: performance.now() - started };
    };

    // (a) store-answered.
    const a = [];
    for (const rows of aSizes) {
      const runs = [];
      const want = rows > 100_000 ? 1 : 3;
      while (runs.length < want) runs.push(await enrichOnce(rows, 'store'));
      const peak = median(runs.map((x) => x.rss));
      a.push({ rows, peak, runs });
      log(`memory (a) store-answered ${num(rows)} rows: peak RSS ${mb(peak)} (${runs.length} run(s))`);
    }

    // (b) sandbox-answered: one run per size (they are long).
    const b = [];
    const small = await enrichOnce(bSmall, 'sandbox');
    b.push({ rows: bSmall, peak: small.rss, runs: [small] });
    log(`memory (b) sandbox-answered ${num(bSmall)} rows: peak RSS ${mb(small.rss)} in ${seconds(small.wallMs)}`);
    if (!quick) {
      const big = await enrichOnce(1_000_000, 'sandbox');
      b.push({ rows: 1_000_000, peak: big.rss, runs: [big] });
      log(`memory (b) sandbox-answered 1,000,000 rows: peak RSS ${mb(big.rss)} in ${seconds(big.wallMs)}`);
    }

    // (c) mixed: one run per size.
    const c = [];
    for (const rows of cSizes) {
      const one = await enrichOnce(rows, 'mixed');
      c.push({ rows, peak: one.rss, runs: [one] });
      log(`memory (c) mixed ${num(rows)} rows: peak RSS ${mb(one.rss)} in ${seconds(one.wallMs)}`);
    }

    for (const [label, series] of [
      ['(a) store-answered', a],
      ['(b) sandbox-answered', b],
      ['(c) mixed', c],
    ]) {
      // One size only (--quick, (b)): no growth to compare.
      const growth = series.length > 1 ? series[1].peak / series[0].peak - 1 : NaN;
      cells.push({ label, series, growth });
    }
  } finally {
    await sandbox.close();
    removeStore(freshStore);
    for (const f of [output, output.replace(/\.csv$/, '.errors.csv')]) fs.rmSync(f, { force: true });
  }

  const peaks = cells.flatMap((c) => c.series.map((s) => s.peak));
  const worst = Math.max(...peaks);
  const flat = cells.every((c) => !(c.growth > 0.2));
  const short = (rows) => (rows >= 1_000_000 ? `${rows / 1_000_000} M` : `${rows / 1000} k`);
  const growthText = (g) => (Number.isFinite(g) ? `${g >= 0 ? '+' : ''}${pct(g)}` : 'one size only');
  const describe = (c) => `${c.label}: ${c.series.map((s) => `${short(s.rows)} ${mb(s.peak)}`).join(', ')} (${growthText(c.growth)})`;
  const larger = (c) => c.series.at(-1);
  return {
    scenario: 'memory',
    figure: `peak RSS ≤ ${mb(worst)}; ${cells.map((c) => `${c.label.split(' ')[0]} ${c.series.map((s) => `${short(s.rows)} ${mb(s.peak)}`).join(' → ')}`).join('; ')}`,
    target: '≤ 150 MB; large size within 20 % of small',
    comparison: cells
      .map((c) =>
        c.series.length > 1
          ? `${c.label.split(' ')[0]} ${short(c.series[1].rows)} vs ${short(c.series[0].rows)}: ${growthText(c.growth)}`
          : `${c.label.split(' ')[0]} one size only (--quick)`,
      )
      .join('; '),
    met: worst <= LIMIT && flat,
    notes: [
      `Peak RSS of the whole child process running the CLI: \`lead-enrich enrich <input> -o <output> --store <copy> --max-age 100000d --base-url <sandbox> --json -q\` (bench/lib/cli-runner.js runs the built dist/cli/main.js in its own process and reads \`process.resourceUsage().maxRSS\`, i.e. getrusage ru_maxrss, just before it exits), so the heap tuning the CLI applies to itself (src/cli/heap-tuning.ts) is included; the sandbox runs in the bench process and is not counted. ${cells.map(describe).join('; ')}.`,
      `(a): pre-filled store (as in known rows), every row billed \`cached\`; ${quick ? '**--quick: 100 k and 200 k rows** (2× apart, not 10×)' : '100 k and 1 M rows'}; ${cells[0].series.map((s) => `${short(s.rows)}: ${s.runs.length} run(s), median`).join('; ')}. (b): sandbox at 10 000 000 RPM, no latency, unlimited credits, fresh empty store, every row looked up (concurrency chosen by enrich); one run per size; ${quick ? '**--quick: one size, 3 k rows, so only the 150 MB limit is checked** (100 k and 1 M, and the growth, only in the full run)' : `${cells[1].series.map((x) => short(x.rows)).join(' and ')} rows`}. (c): the same sandbox, and a copy of a store pre-filled with every other row's answer (bench/out/store-<rows>-half.sqlite, renamed to the sandbox's URL, the service the CLI names): half the rows billed \`cached\`, the other half looked up, interleaved; one run per size; ${quick ? '**--quick: one size, 20 k rows**' : '100 k and 1 M rows'}.`,
      `RSS sampled every 250 ms during the larger (or only) run of each, at 25 %, 50 %, 75 % of the run and at its end: ${cells.map((c) => `${c.label.split(' ')[0]} ${list(larger(c).runs[0].quartiles ?? [], mb)}`).join('; ')}.`,
      `Where the memory is, at the highest RSS sample of the larger (or only) run (process.memoryUsage()): ${cells.map((c) => breakdown(c.label.split(' ')[0], larger(c).runs[0].atPeak)).join('; ')}. "Other" is native memory outside the V8 heap: Node itself (~40 MB for an empty process), the store's SQLite page cache (up to 8 MiB: \`cache_size\` in result-store.ts), sockets, malloc slack.`,
      ...notes,
    ],
    raw: { cells: cells.map((c) => ({ label: c.label, growth: c.growth, series: c.series.map((s) => ({ rows: s.rows, peak: s.peak })) })) },
  };
}

function breakdown(label, u) {
  if (!u || !u.rss) return `${label} n/a`;
  const other = u.rss - u.heapTotal - u.external;
  return `${label} RSS ${mb(u.rss)} = V8 heap ${mb(u.heapTotal)} (of which in use, garbage included: ${mb(u.heapUsed)}) + external ${mb(u.external)} + other ${mb(other)}`;
}

// latency hiding: with a slow API (1 s per request) and a generous limit (3 000 RPM = 50/s), does
// the automatic concurrency (no --concurrency) keep enough requests in flight to use the rate?
// Achieved rate = requests the sandbox received during a steady span (after a ramp-up), ÷ RPM/60.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSandbox } from '../../dist/sandbox/index.js';
import { contactsCsv } from '../lib/data.js';
import { OUT_DIR, list, log, median, pct, removeStore, runNode, sleep } from '../lib/util.js';

export const name = 'latency';

export async function run({ quick }) {
  const rpm = 3000;
  const latency = 1000;
  const runs = quick ? 1 : 3;
  const rampMs = quick ? 3000 : 5000;
  const spanMs = quick ? 7000 : 20_000;
  const input = contactsCsv(10_000);
  const ratios = [];
  const details = [];
  for (let r = 0; r < runs; r++) {
    // A fresh sandbox per run: the run stays inside the sandbox's first 60-s window, so the
    // window limit never binds and only pacing and concurrency decide the rate.
    const sandbox = await startSandbox({ rpm, latencyMs: [latency, latency], credits: 1_000_000_000, threshold: 0 });
    const store = path.join(os.tmpdir(), `lead-enrich-bench-latency-${process.pid}.sqlite`);
    removeStore(store);
    const output = path.join(OUT_DIR, 'latency.enriched.csv');
    try {
      const running = runNode(['bench/lib/enrich-runner.js', JSON.stringify({ input, output, store, baseUrl: sandbox.baseUrl, token: sandbox.token })], {
        json: true,
      });
      const settled = running.catch((error) => error);
      const t0 = Date.now();
      // The ramp starts when the first lookup arrives (child start-up and account reads excluded).
      while (sandbox.stats.byOperation.lookup_email === undefined && Date.now() - t0 < 30_000) await sleep(5);
      await sleep(rampMs);
      const a = { t: performance.now(), n: sandbox.stats.requests };
      await sleep(spanMs);
      const b = { t: performance.now(), n: sandbox.stats.requests };
      running.child.kill('SIGTERM');
      await settled;
      const perSecond = ((b.n - a.n) * 1000) / (b.t - a.t);
      const ratio = perSecond / (rpm / 60);
      ratios.push(ratio);
      details.push(
        `run ${r + 1}: ${perSecond.toFixed(1)}/s (${b.n - a.n} requests in ${((b.t - a.t) / 1000).toFixed(2)} s), 429s ${sandbox.stats.rateLimited}`,
      );
      log(`latency run ${r + 1}/${runs}: ${perSecond.toFixed(1)} req/s = ${pct(ratio)}`);
    } finally {
      await sandbox.close();
      removeStore(store);
      fs.rmSync(output, { force: true });
      fs.rmSync(output.replace(/\.csv$/, '.errors.csv'), { force: true });
    }
  }
  const figure = median(ratios);
  return {
    scenario: 'latency hiding',
    figure: `${pct(figure)} of RPM (median of ${runs})`,
    target: '≥ 95 %',
    comparison: `the limit: ${rpm} RPM = ${rpm / 60}/s; runs ${list(ratios, (x) => pct(x))}`,
    met: figure >= 0.95,
    notes: [
      `Sandbox: ${rpm} RPM (60-s windows), every request takes ${latency} ms, credits unlimited; a fresh sandbox per run. enrich in a child process with no --concurrency (automatic: rate × measured latency × 2) and no --rpm.`,
      `Achieved rate = requests received by the sandbox during a ${spanMs / 1000}-s span that begins ${rampMs / 1000} s after the first lookup arrived (ramp-up excluded), ÷ ${rpm / 60}/s. ${runs} run(s), median${quick ? ' (--quick: 1 run, shorter span)' : ''}.`,
      details.join('; ') + '.',
    ],
    raw: { ratios },
  };
}

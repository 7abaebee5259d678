// no limit: with a rate limit too high to matter, how close does enrich come to what the HTTP
// client alone can do? enrich (no --rpm: sized from the account, here 10 000 000 RPM) on N rows
// with distinct emails and a fresh store, against a bare got keep-alive loop making the same N
// lookups at the same concurrency (the concurrency enrich chose, from its summary) to the same
// sandbox. Both in child processes, alternating, repeated; figure = median of paired ratios.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSandbox } from '../../dist/sandbox/index.js';
import { contactsCsv } from '../lib/data.js';
import { OUT_DIR, list, log, median, num, pct, removeStore, runNode } from '../lib/util.js';

export const name = 'nolimit';

export async function run({ quick }) {
  const keys = quick ? 3000 : 12_000;
  const pairs = quick ? 2 : 5;
  const input = contactsCsv(keys);
  const sandbox = await startSandbox({ rpm: 10_000_000, credits: 1_000_000_000_000, threshold: 0 });
  const store = path.join(os.tmpdir(), `lead-enrich-bench-nolimit-${process.pid}.sqlite`);
  const output = path.join(OUT_DIR, 'nolimit.enriched.csv');
  const e = [];
  const g = [];
  const ratios = [];
  let concurrency;
  try {
    const runEnrich = async () => {
      removeStore(store); // every run pays: nothing may come from an earlier run's answers
      const r = await runNode(['bench/lib/enrich-runner.js', JSON.stringify({ input, output, store, baseUrl: sandbox.baseUrl, token: sandbox.token })], {
        json: true,
      });
      const j = r.json;
      if (j.requests !== keys || j.status.error !== 0 || j.rateLimited !== 0) {
        throw new Error(`no limit: expected ${keys} lookups without error, got ${j.requests} requests, ${JSON.stringify(j.status)}, ${j.rateLimited} × 429`);
      }
      concurrency = j.concurrency;
      return { perSecond: (j.requests * 1000) / j.enrichMs, concurrency: j.concurrency, rss: j.maxRssBytes };
    };
    const runGot = async (c) => {
      const r = await runNode(['bench/lib/got-runner.js', JSON.stringify({ baseUrl: sandbox.baseUrl, token: sandbox.token, keys, concurrency: c })], {
        json: true,
      });
      if (r.json.failed !== 0) throw new Error(`got loop: ${r.json.failed} failed requests`);
      return { perSecond: (r.json.requests * 1000) / r.json.ms };
    };
    // The got loop needs enrich's concurrency: the first pair runs enrich first.
    for (let i = 0; i < pairs; i++) {
      let a;
      let b;
      if (i % 2 === 0) {
        a = await runEnrich();
        b = await runGot(a.concurrency);
      } else {
        b = await runGot(concurrency);
        a = await runEnrich();
      }
      e.push(a);
      g.push(b);
      ratios.push(a.perSecond / b.perSecond);
      log(
        `no limit pair ${i + 1}/${pairs}: enrich ${num(a.perSecond)}/s, got loop ${num(b.perSecond)}/s (concurrency ${a.concurrency}) = ${pct(ratios.at(-1))}`,
      );
    }
  } finally {
    await sandbox.close();
    removeStore(store);
    for (const f of [output, output.replace(/\.csv$/, '.errors.csv')]) fs.rmSync(f, { force: true });
  }
  const figure = median(ratios);
  return {
    scenario: 'no limit',
    figure: `${pct(figure)} of the got loop (enrich ${num(median(e.map((x) => x.perSecond)))} lookups/s)`,
    target: '≥ 70 %',
    comparison: `bare got keep-alive loop, concurrency ${concurrency}: ${num(median(g.map((x) => x.perSecond)))} lookups/s (median)`,
    met: figure >= 0.7,
    notes: [
      `Sandbox in the bench process: 10 000 000 RPM, no latency, unlimited credits. ${num(keys)} distinct emails (bench/out/contacts-${keys}.csv), about 90 % found.${quick ? ' **--quick: 3 000 keys, 2 pairs.**' : ''}`,
      `enrich: built library in a child process, no --rpm (sized from /account/limits), no --concurrency (it chose ${concurrency}: the automatic cap), a fresh empty store every run; lookups/s = lookups ÷ duration of the enrich() call (CSV read, account reads, store writes and output included). got loop: bench/lib/got-runner.js, got from node_modules with a keep-alive http.Agent, the same ${concurrency} workers, the same ${num(keys)} emails, response parsed as JSON.`,
      `${pairs} pairs, alternating which runs first (the first pair runs enrich first to learn its concurrency); figure = median of the per-pair ratios: ${list(ratios, (x) => pct(x))}. enrich ${list(e, (x) => `${num(x.perSecond)}/s`)}; got ${list(g, (x) => `${num(x.perSecond)}/s`)}. Client and sandbox share the machine's ${os.cpus().length} cores.`,
    ],
    raw: { keys, ratios, enrich: e, got: g, concurrency },
  };
}

#!/usr/bin/env node
// Profiles what a bench scenario measures, to explain a missed target (the report says which).
//
//   node bench/profile.js startup          CPU profile of `node dist/cli/main.js --help`, plus the
//                                          import cost of each runtime dependency
//   node bench/profile.js known [ROWS]     CPU profile of enrich() on ROWS store-answered rows (default 100 000)
//   node bench/profile.js nolimit [KEYS]   CPU profile of enrich() against a no-limit sandbox (default 20 000)
//   node bench/profile.js memory [ROWS] [MS]  heap snapshot MS (default 4000) into a sandbox-answered run of ROWS (default 20 000),
//                                          and of a store-answered one (100 000), by constructor
//
// Profiles (.cpuprofile: open in Chrome DevTools → Performance; .heapsnapshot: → Memory) are kept
// in bench/out/profiles/; the top self-time functions / heaviest constructors are printed.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startSandbox } from '../dist/sandbox/index.js';
import { formatTop, topSelfTime } from './lib/cpuprofile.js';
import { contactsCsv, prefilledStore } from './lib/data.js';
import { formatHeap, heapSummary } from './lib/heapsnapshot.js';
import { OUT_DIR, ROOT, ensureOutDir, median, removeStore, runNode } from './lib/util.js';

const [what, sizeArg, afterArg] = process.argv.slice(2);
ensureOutDir();
const dir = path.join(OUT_DIR, 'profiles');
fs.mkdirSync(dir, { recursive: true });

function newestProfile(before) {
  const fresh = fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
  if (fresh.length === 0) throw new Error('no .cpuprofile was written');
  return path.join(dir, fresh.sort().at(-1));
}

async function profileRunner(spec, runner = 'bench/lib/enrich-runner.js') {
  const before = new Set(fs.readdirSync(dir));
  const r = await runNode([runner, JSON.stringify(spec)], { json: true, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
  const file = newestProfile(before);
  const ms = r.json.enrichMs ?? r.json.ms;
  console.log(
    `${runner}: ${r.json.rows ?? '-'} rows, ${r.json.requests} requests in ${(ms / 1000).toFixed(2)} s (profiling slows it down); profile ${path.relative(ROOT, file)}`,
  );
  const summary = topSelfTime(file, 30);
  if (r.json.requests) console.log(`CPU (not idle) per 1 000 requests: ${((summary.busyMs * 1000) / r.json.requests).toFixed(0)} ms`);
  console.log(formatTop(summary));
  return r.json;
}

async function withSandbox(options, fn) {
  const sandbox = await startSandbox(options);
  try {
    return await fn(sandbox);
  } finally {
    await sandbox.close();
  }
}

if (what === 'startup') {
  const before = new Set(fs.readdirSync(dir));
  spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${dir}`, 'dist/cli/main.js', '--help'], { cwd: ROOT, stdio: 'ignore' });
  const file = newestProfile(before);
  console.log(`node dist/cli/main.js --help; profile ${path.relative(ROOT, file)}`);
  console.log(formatTop(topSelfTime(file, 30)));
  // What each runtime dependency costs to import on its own (median of 5, minus `node -e 0`).
  const time = (args) => {
    const t = performance.now();
    spawnSync(process.execPath, args, { cwd: ROOT, stdio: 'ignore' });
    return performance.now() - t;
  };
  const base = median(Array.from({ length: 5 }, () => time(['-e', '0'])));
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const rows = [];
  for (const dep of [...Object.keys(pkg.dependencies ?? {}), './dist/index.js', './dist/cli/main.js --help']) {
    const [spec, flag] = dep.split(' ');
    const args = flag ? [spec.slice(2), flag] : ['--input-type=module', '-e', `await import(${JSON.stringify(spec)})`];
    rows.push([dep, median(Array.from({ length: 5 }, () => time(args))) - base]);
  }
  console.log(`\nimport cost over \`node -e 0\` (${base.toFixed(0)} ms), median of 5:`);
  for (const [dep, ms] of rows.sort((a, b) => b[1] - a[1])) console.log(`${ms.toFixed(0).padStart(6)} ms  ${dep}`);
} else if (what === 'known') {
  const rows = Number(sizeArg ?? 100_000);
  const input = contactsCsv(rows);
  const store = await prefilledStore(rows);
  await withSandbox({}, (sandbox) =>
    profileRunner({ input, output: path.join(OUT_DIR, 'profile.enriched.csv'), store, baseUrl: sandbox.baseUrl, token: sandbox.token, maxAgeMs: 1e13 }),
  );
} else if (what === 'nolimit') {
  const keys = Number(sizeArg ?? 20_000);
  const input = contactsCsv(keys);
  const store = path.join(OUT_DIR, 'profile.sqlite');
  removeStore(store);
  await withSandbox({ rpm: 10_000_000, credits: 1e12, threshold: 0 }, async (sandbox) => {
    const e = await profileRunner({ input, output: path.join(OUT_DIR, 'profile.enriched.csv'), store, baseUrl: sandbox.baseUrl, token: sandbox.token });
    console.log('\n--- the baseline: bare got loop, same keys, same concurrency ---');
    await profileRunner({ baseUrl: sandbox.baseUrl, token: sandbox.token, keys, concurrency: e.concurrency }, 'bench/lib/got-runner.js');
  });
  removeStore(store);
} else if (what === 'memory') {
  const rows = Number(sizeArg ?? 20_000);
  for (const mode of ['sandbox', 'store']) {
    const n = mode === 'store' ? 100_000 : rows;
    const input = contactsCsv(n);
    const fresh = path.join(OUT_DIR, 'profile.sqlite');
    removeStore(fresh);
    const store = mode === 'store' ? await prefilledStore(n) : fresh;
    const heapFile = path.join(dir, `${mode}-${n}.heapsnapshot`);
    await withSandbox({ rpm: 10_000_000, credits: 1e12, threshold: 0 }, async (sandbox) => {
      const r = await runNode(
        [
          'bench/lib/enrich-runner.js',
          JSON.stringify({
            input,
            output: path.join(OUT_DIR, 'profile.enriched.csv'),
            store,
            baseUrl: sandbox.baseUrl,
            token: sandbox.token,
            maxAgeMs: 1e13,
            heapSnapshotAfterMs: mode === 'store' ? 1200 : Number(afterArg ?? 4000),
            heapSnapshotFile: heapFile,
          }),
        ],
        { json: true },
      );
      const mb = (x) => `${(x / 1048576).toFixed(1)} MB`;
      console.log(
        `\n${mode}-answered, ${n} rows: peak RSS ${mb(r.json.maxRssBytes)} (inflated by the snapshot itself); at the highest RSS sample before it: ${Object.entries(
          r.json.atPeak,
        )
          .map(([k, v]) => `${k} ${mb(v)}`)
          .join(', ')}`,
      );
      console.log(
        r.stderr
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('heap snapshot'))
          .join('\n'),
      );
      if (fs.existsSync(heapFile)) console.log(formatHeap(heapSummary(heapFile, 25)));
      else console.log('(the run ended before the snapshot time)');
    });
    removeStore(fresh);
  }
} else {
  process.stderr.write('usage: node bench/profile.js startup | known [ROWS] | nolimit [KEYS] | memory [ROWS]\n');
  process.exit(1);
}
for (const f of ['profile.enriched.csv', 'profile.enriched.errors.csv']) fs.rmSync(path.join(OUT_DIR, f), { force: true });

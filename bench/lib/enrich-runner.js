// Child-process runner: one enrich() call of the BUILT library, then one JSON line on stdout with
// the summary's figures, the time spent inside enrich() and the process's peak RSS.
// Usage: node bench/lib/enrich-runner.js '<json options>'
// Running each measured pipeline in its own process keeps the bench parent (which hosts the
// sandbox) out of the memory figure and gives every run a fresh heap and JIT.
import { performance } from 'node:perf_hooks';
import { enrich } from '../../dist/index.js';
import { sampleRss } from './rss-sampler.js';

const spec = JSON.parse(process.argv[2] ?? '{}');
const controller = new AbortController();
if (spec.abortAfterMs) setTimeout(() => controller.abort(), spec.abortAfterMs).unref();
// bench/profile.js: a heap snapshot (live objects only: it collects garbage first) mid-run.
if (spec.heapSnapshotAfterMs) {
  setTimeout(async () => {
    const v8 = await import('node:v8');
    const before = process.memoryUsage();
    const file = v8.writeHeapSnapshot(spec.heapSnapshotFile);
    process.stderr.write(`heap snapshot ${file}; memoryUsage just before: ${JSON.stringify(before)}\n`);
  }, spec.heapSnapshotAfterMs).unref();
}

// RSS sampled every 250 ms too, to show whether memory is flat or growing during the run.
// This interval is deliberately NOT unref'd: enrich()'s own timers all are (the rate gate's
// refill timer included), so when every job waits for the next window with no request in flight
// the event loop empties and Node exits with status 13 mid-run ("unsettled top-level await").
// Found by this bench (the rate scenario checks it on every run and reports it in BENCHMARKS.md);
// the ref'd sampler keeps the runner alive, as any host program with other work would.
const sampler = sampleRss();
// `keepAlive: false` unrefs it, to check whether enrich() keeps the process alive by itself.
if (spec.keepAlive === false) sampler.timer.unref();

const started = performance.now();
let summary;
try {
  summary = await enrich({
    input: spec.input,
    output: spec.output,
    errors: spec.errors,
    baseUrl: spec.baseUrl,
    token: spec.token,
    service: spec.service ?? 'bench',
    store: spec.store,
    maxAgeMs: spec.maxAgeMs,
    ...(spec.rpm === undefined ? {} : { rpm: spec.rpm }),
    ...(spec.concurrency === undefined ? {} : { concurrency: spec.concurrency }),
    ...(spec.tuning === undefined ? {} : { tuning: spec.tuning }),
    signal: controller.signal,
  });
} finally {
  sampler.stop();
}
const enrichMs = performance.now() - started;

const usage = process.resourceUsage();
process.stdout.write(
  `${JSON.stringify({
    enrichMs,
    rows: summary.rows,
    status: summary.status,
    billing: summary.billing,
    requests: summary.requests,
    rateLimited: summary.rateLimited,
    retries: summary.retries,
    rpm: summary.rpm,
    concurrency: summary.concurrency,
    stoppedBy: summary.stoppedBy ?? null,
    maxRssBytes: usage.maxRSS * 1024,
    // RSS over the run, and process.memoryUsage() at the highest sample: V8 heap vs the rest (native).
    ...sampler.report(),
    cpuUserMs: usage.userCPUTime / 1000,
    cpuSystemMs: usage.systemCPUTime / 1000,
  })}\n`,
);

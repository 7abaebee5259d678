// Child-process runner for the command line: runs `lead-enrich <args>` (the BUILT dist/cli/main.js)
// inside this process, so that the peak RSS read at exit is the CLI's own, flags it sets itself
// included, then prints one JSON line on stdout after the CLI's own output (its --json summary).
// Usage: node bench/lib/cli-runner.js '{"args":["enrich","in.csv","-o","out.csv","--json"],"env":{...}}'
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { sampleRss } from './rss-sampler.js';

const spec = JSON.parse(process.argv[2] ?? '{}');
Object.assign(process.env, spec.env ?? {});
process.argv = [process.argv[0], 'lead-enrich', ...spec.args];

const sampler = sampleRss();
sampler.timer.unref();

const started = performance.now();
// main.js is the one place that exits the process; this runs just before it does.
process.on('exit', (code) => {
  const usage = process.resourceUsage();
  const result = {
    code,
    ms: performance.now() - started,
    maxRssBytes: usage.maxRSS * 1024,
    ...sampler.report(),
    cpuUserMs: usage.userCPUTime / 1000,
    cpuSystemMs: usage.systemCPUTime / 1000,
  };
  fs.writeSync(1, `\n${JSON.stringify(result)}\n`);
});
await import('../../dist/cli/main.js');

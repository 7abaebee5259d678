// start-up: how long the CLI takes to be ready, against the cost of starting Node itself.
// `node dist/cli/main.js --help` vs `node -e 0`, each run N times, interleaved (so a noisy phase
// of the machine hits both), after one untimed warm-up of each (disk cache); figure = ratio of
// the medians of wall times.
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { ROOT, list, log, median, min } from '../lib/util.js';

export const name = 'startup';

function time(args) {
  const started = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

export async function run({ quick }) {
  const n = quick ? 10 : 20;
  const cli = ['dist/cli/main.js', '--help'];
  const bare = ['-e', '0'];
  time(cli);
  time(bare);
  const c = [];
  const b = [];
  for (let i = 0; i < n; i++) {
    c.push(time(cli));
    b.push(time(bare));
  }
  const ratio = median(c) / median(b);
  log(`start-up: --help ${median(c).toFixed(0)} ms, node -e 0 ${median(b).toFixed(0)} ms = ${ratio.toFixed(2)}×`);
  const ms = (x) => `${x.toFixed(0)} ms`;
  return {
    scenario: 'start-up',
    figure: `${ratio.toFixed(2)}× (--help ${ms(median(c))})`,
    target: '≤ 3×',
    comparison: `\`node -e 0\`: ${ms(median(b))} (median)`,
    met: ratio <= 3,
    notes: [
      `Wall time of \`node dist/cli/main.js --help\` and of \`node -e 0\` (spawnSync, from the repository root, output piped), ${n} runs each, interleaved, after one untimed warm-up of each; figure = median ÷ median. --help: ${list(c, ms)}; min ${ms(min(c))}. node -e 0: ${list(b, ms)}; min ${ms(min(b))}. Ratio of the minimums: ${(min(c) / min(b)).toFixed(2)}×.`,
    ],
    raw: { cli: c, bare: b, ratio },
  };
}

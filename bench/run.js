#!/usr/bin/env node
// The benchmark driver (issue 6): runs the scenarios against the sandbox, with the BUILT library
// (dist/; `npm run bench` builds first), and writes BENCHMARKS.md.
//
//   npm run bench                      every scenario, full size (< 20 min on 2 cores)
//   npm run bench -- --quick           every scenario, shrunk (< 2 min)
//   node bench/run.js rate [known …]   only the named scenarios (combine with --quick)
//   node bench/run.js --out FILE       write the report elsewhere (default: BENCHMARKS.md)
//
// Scenarios: startup, rate, cluster, latency, nolimit, known, encodings, xlsx, memory (bench/scenarios/). Each measures
// its figure and its baseline in the same run, repeats, and reports the median. Exit status: 0
// when every scenario ran (targets met or not: the report says), 1 when one could not run.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIST, OUT_DIR, ROOT, ensureOutDir, log } from './lib/util.js';

const SCENARIOS = {
  startup: './scenarios/startup.js',
  rate: './scenarios/rate.js',
  cluster: './scenarios/cluster-rate.js',
  latency: './scenarios/latency.js',
  nolimit: './scenarios/no-limit.js',
  known: './scenarios/known-rows.js',
  encodings: './scenarios/encodings.js',
  xlsx: './scenarios/xlsx.js',
  memory: './scenarios/memory.js',
};
const ALIASES = { 'start-up': 'startup', 'no-limit': 'nolimit', 'known-rows': 'known', 'latency-hiding': 'latency', mem: 'memory' };
// Order: memory last (the longest).
const ORDER = ['startup', 'rate', 'cluster', 'latency', 'nolimit', 'known', 'encodings', 'xlsx', 'memory'];

function usage(message) {
  if (message) process.stderr.write(`bench: ${message}\n`);
  process.stderr.write(`usage: node bench/run.js [--quick] [--out FILE] [${ORDER.join('|')} ...]\n`);
  process.exit(message ? 1 : 0);
}

function parseArgs(argv) {
  const options = { quick: false, out: path.join(ROOT, 'BENCHMARKS.md'), scenarios: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') options.quick = true;
    else if (arg === '--out') {
      if (!argv[i + 1]) usage('--out needs a file name');
      options.out = path.resolve(argv[++i]);
    } else if (arg.startsWith('--out=')) options.out = path.resolve(arg.slice(6));
    else if (arg === '--help' || arg === '-h') usage();
    else if (arg.startsWith('-')) usage(`unknown option ${arg}`);
    else {
      const name = ALIASES[arg] ?? arg;
      if (!SCENARIOS[name]) usage(`unknown scenario '${arg}' (expected one of ${ORDER.join(', ')})`);
      if (!options.scenarios.includes(name)) options.scenarios.push(name);
    }
  }
  if (options.scenarios.length === 0) options.scenarios = [...ORDER];
  else options.scenarios.sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
  return options;
}

function commandLine(argv) {
  if (process.env.npm_lifecycle_event === 'bench') return `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`;
  return `node bench/run.js${argv.length ? ` ${argv.join(' ')}` : ''}`;
}

function git(args) {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model?.trim() ?? 'unknown',
    cores: cpus.length,
    memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

function cell(text) {
  return String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function duration(ms) {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

/** bench/analysis.md: the hand-written why and fix of the missed targets, if there is one. */
function readAnalysis() {
  try {
    return fs.readFileSync(path.join(ROOT, 'bench', 'analysis.md'), 'utf8');
  } catch {
    return undefined;
  }
}

function report({ options, command, startedAt, elapsedMs, info, loadStart, loadEnd, commit, dirty, results }) {
  const analysis = readAnalysis();
  const lines = [];
  lines.push('# Benchmarks', '');
  lines.push(
    `Written by \`bench/run.js\` (issue 6); do not edit by hand: re-run the command below. ${options.quick ? '**Quick mode**: several scenarios are shrunk to fit in 2 minutes (each says how); run `npm run bench` for the full figures.' : 'Full run.'}`,
    '',
  );
  lines.push(`- **Command**: \`${command}\``);
  lines.push(`- **Date**: ${startedAt.toISOString().replace(/\.\d+Z$/, 'Z')} (the run took ${duration(elapsedMs)})`);
  lines.push(`- **Machine**: ${info.cpu}, ${info.cores} cores, ${info.memory} memory, ${info.os}; Node ${info.node}`);
  lines.push(
    `- **Load average** (1/5/15 min) at start ${loadStart}, at end ${loadEnd}: a shared machine, so every figure is a ratio to a baseline measured in the same run, repeated, median.`,
  );
  lines.push(`- **Library**: \`dist/\` as built from commit ${commit ?? 'unknown'}${dirty ? ' plus uncommitted changes under src/' : ''}.`);
  lines.push('');
  lines.push('| scenario | figure | target | comparison (measured in the same run) | met? |');
  lines.push('| --- | --- | --- | --- | --- |');
  for (const r of results) {
    const met = r.error
      ? '**error**'
      : r.met
        ? 'yes'
        : `**no**${analysis ? ': why and what would fix it [below](#missed-targets-why-and-what-would-fix-them)' : ''}`;
    lines.push(`| ${cell(r.scenario)} | ${cell(r.figure)} | ${cell(r.target)} | ${cell(r.comparison)} | ${met} |`);
  }
  const findings = results.flatMap((r) => r.findings ?? []);
  if (findings.length > 0) {
    lines.push('', '## Problems found while benchmarking', '');
    for (const f of findings) lines.push(`- ${f}`);
  }
  lines.push('', '## Notes per scenario', '');
  for (const r of results) {
    lines.push(`### ${r.scenario}`, '');
    for (const note of r.notes ?? []) lines.push(`- ${note}`);
    if (r.seconds !== undefined) lines.push(`- Wall time of this scenario: ${duration(r.seconds * 1000)}.`);
    lines.push('');
  }
  lines.push('## Method', '');
  lines.push(
    '- Scripts: `bench/run.js` (driver), `bench/scenarios/*.js` (one per scenario), `bench/lib/` (runners spawned as child processes, data generation, helpers). Plain ESM JavaScript importing the built library from `dist/`.',
  );
  lines.push(
    '- Every measured pipeline runs in its own `node` child process (fresh heap and JIT, peak RSS of that process only); the sandbox runs in the bench process. Generated inputs and pre-filled stores are cached in `bench/out/` (gitignored); temporary stores go to the OS temp directory.',
  );
  lines.push(
    '- A single scenario: `node bench/run.js rate` (names: startup, rate, cluster, latency, nolimit, known, encodings, xlsx, memory; with `--quick` to shrink, `--out FILE` to write elsewhere). Profiles of the missed targets: `node bench/profile.js <scenario>`.',
  );
  lines.push('');
  // The why of each missed target is written by hand, kept beside the scripts, and carried along.
  if (analysis) lines.push(analysis.trimEnd(), '');
  return lines.join('\n');
}

async function main() {
  const argv = process.argv.slice(2);
  const options = parseArgs(argv);
  if (!fs.existsSync(path.join(DIST, 'index.js'))) usage('dist/ is missing: run `npm run build` first (npm run bench does)');
  ensureOutDir();
  const command = commandLine(argv);
  const startedAt = new Date();
  const t0 = performance.now();
  const loadStart = load();
  const info = machine();
  log(`${command}: ${options.scenarios.join(', ')}${options.quick ? ' (quick)' : ''} on ${info.cpu}, ${info.cores} cores`);
  const results = [];
  for (const name of options.scenarios) {
    const started = performance.now();
    log(`— ${name}`);
    try {
      const scenario = await import(SCENARIOS[name]);
      const result = await scenario.run({ quick: options.quick });
      result.seconds = (performance.now() - started) / 1000;
      results.push(result);
      log(`${name}: ${result.figure} (target ${result.target}) → ${result.met ? 'met' : 'MISSED'} in ${duration(result.seconds * 1000)}`);
    } catch (error) {
      log(`${name} FAILED: ${error.stack ?? error}`);
      results.push({
        scenario: name,
        figure: `could not run: ${String(error.message ?? error).split('\n')[0]}`,
        target: '',
        comparison: '',
        met: false,
        error: true,
        notes: [`Error: ${String(error.message ?? error).slice(0, 2000)}`],
      });
    }
  }
  const elapsedMs = performance.now() - t0;
  const commit = git(['rev-parse', '--short', 'HEAD']);
  const dirty = (git(['status', '--porcelain', '--', 'src']) ?? '') !== '';
  const text = report({ options, command, startedAt, elapsedMs, info, loadStart, loadEnd: load(), commit, dirty, results });
  fs.writeFileSync(options.out, text);
  fs.writeFileSync(
    path.join(OUT_DIR, 'results.json'),
    `${JSON.stringify({ command, startedAt, elapsedMs, machine: info, quick: options.quick, results }, null, 2)}\n`,
  );
  // Temporary outputs a failed or stopped run may leave (enrich writes hidden *.partial files).
  for (const f of fs.readdirSync(OUT_DIR)) if (f.startsWith('.') && f.endsWith('.partial')) fs.rmSync(path.join(OUT_DIR, f), { force: true });
  log(`wrote ${path.relative(process.cwd(), options.out) || options.out} in ${duration(elapsedMs)}`);
  process.stdout.write(
    `${text
      .split('\n')
      .filter((l) => l.startsWith('|'))
      .join('\n')}\n`,
  );
  process.exitCode = results.some((r) => r.error) ? 1 : 0;
}

await main();

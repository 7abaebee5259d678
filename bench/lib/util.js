// Small helpers shared by the bench scenarios: statistics, formatting, child processes, paths.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT = path.resolve(BENCH_DIR, '..');
export const OUT_DIR = path.join(BENCH_DIR, 'out');
export const DIST = path.join(ROOT, 'dist');

export function ensureOutDir() {
  fs.mkdirSync(OUT_DIR, { recursive: true });
  return OUT_DIR;
}

export function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

export const min = (values) => Math.min(...values);
export const max = (values) => Math.max(...values);

export function pct(ratio, digits = 1) {
  return Number.isFinite(ratio) ? `${(ratio * 100).toFixed(digits)} %` : 'n/a';
}

export function num(n, digits = 0) {
  if (!Number.isFinite(n)) return 'n/a';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function mb(bytes) {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function seconds(ms) {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** "a / b / c" of a list, formatted. */
export function list(values, fmt = (x) => String(x)) {
  return values.map(fmt).join(' / ');
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function log(...parts) {
  const t = new Date().toISOString().slice(11, 19);
  process.stderr.write(`[bench ${t}] ${parts.join(' ')}\n`);
}

/**
 * Runs `node [nodeArgs] <args>` and resolves with { code, stdout, stderr, wallMs }. The child's last stdout
 * line is expected to be JSON when `json` is set (the runners print one result object).
 */
export function runNode(args, { env = {}, json = false, timeoutMs = 30 * 60_000, cwd = ROOT, nodeArgs = [] } = {}) {
  let child;
  const promise = new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    child = spawn(process.execPath, [...nodeArgs, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      const result = { code, signal, stdout, stderr, wallMs, pid: child.pid };
      if (!json) return resolve(result);
      const last = stdout.trim().split('\n').pop() ?? '';
      try {
        result.json = JSON.parse(last);
      } catch {
        return reject(new Error(`node ${args.join(' ')} exited ${code ?? signal} without a JSON result:\n${stderr.slice(-2000)}\n${stdout.slice(-500)}`));
      }
      if (code !== 0) return reject(new Error(`node ${args.join(' ')} exited ${code ?? signal}:\n${stderr.slice(-2000)}`));
      resolve(result);
    });
  });
  /** The child process, so that a caller can end it (by its own pid) before it finishes. */
  promise.child = child;
  return promise;
}

/** Removes a SQLite store and its WAL/SHM companions. */
export function removeStore(file) {
  for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(file + suffix, { force: true });
}

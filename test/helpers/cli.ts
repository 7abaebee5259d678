// Runs the BUILT command line (`dist/cli/main.js`, so `npm run build` / `npx tsc -p .` first) as a
// subprocess, the way users and CI scripts run it. Shared by every test file that drives the CLI.
//
//   const r = await runCli(['lookup', 'email', 'jane@acme.com'], { env: { LEAD_API_BASE_URL: sb.baseUrl, LEAD_API_TOKEN: sb.token } });
//   expect(r.code).toBe(0);
//   JSON.parse(r.stdout);
//
//   const child = spawnCli(['sandbox', '--port', '0']);
//   const text = await waitForOutput(child, /listening on (\S+)/);   // stdout by default
//   child.kill('SIGINT');
//   const r = await child.result;                                   // { code, signal, stdout, stderr, timedOut }
//
// The environment is CLEAN: only PATH and HOME are inherited, never LEAD_API_* or
// LEAD_ENRICH_* from the parent, so a developer's real token can never reach a test (or a test's
// output). `LEAD_ENRICH_STORE` points into a fresh temporary directory (removed when the process
// ends) unless `options.env` names it. `options.env` is applied last; a value of `undefined`
// removes the variable.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir } from './temp-dirs.js';

/** The repository root (where package.json is). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built entry point that `package.json#bin` names. */
export const CLI_PATH = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
/**
 * `LEAD_ENRICH_TEST_EXE=exe/lead-enrich`: runCli and spawnCli start that single executable
 * (`npm run build:exe`) instead of `node dist/cli/main.js`, so the same tests drive it.
 */
const CLI_COMMAND: [string, ...string[]] = process.env.LEAD_ENRICH_TEST_EXE
  ? [path.resolve(REPO_ROOT, process.env.LEAD_ENRICH_TEST_EXE)]
  : [process.execPath, CLI_PATH];

export interface CliOptions {
  /** Added to the clean environment (see above); `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed. runCli closes stdin even without input. */
  input?: string | Buffer;
  /** Working directory. Default: the repository root. */
  cwd?: string;
  /** The process is killed with SIGKILL after this long (result.timedOut = true). Default 30000. */
  timeoutMs?: number;
}

export interface CliResult {
  /** Exit status, or null when the process was killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the helper killed the process because `timeoutMs` ran out. */
  timedOut: boolean;
}

export interface CliProcess extends ChildProcess {
  /** Settles (never rejects) when the process has exited and its output is fully read. */
  result: Promise<CliResult>;
  /** Everything written so far; updated live. */
  output: { stdout: string; stderr: string };
}

/** A fresh directory under os.tmpdir(), removed when the test file ends. */
export function tempDir(prefix = 'lead-enrich-test-'): string {
  return makeTempDir(prefix);
}

function cleanEnv(extra: Record<string, string | undefined> | undefined): { env: NodeJS.ProcessEnv; storeDir?: string } {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'SYSTEMROOT', 'TMPDIR', 'TEMP', 'TMP']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  let storeDir: string | undefined;
  if (!extra || !Object.hasOwn(extra, 'LEAD_ENRICH_STORE')) {
    storeDir = tempDir('lead-enrich-store-');
    env.LEAD_ENRICH_STORE = path.join(storeDir, 'results.sqlite');
  }
  for (const [name, value] of Object.entries(extra ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return storeDir === undefined ? { env } : { env, storeDir };
}

/**
 * Starts `node dist/cli/main.js ...args` (or the executable, above) and returns the child at once,
 * for tests that send signals or read output while it runs. stdin stays open unless `options.input`
 * is given (then it is written and closed); call `child.stdin.end()` yourself otherwise if the
 * command reads it.
 */
export function spawnCli(args: string[], options: CliOptions = {}): CliProcess {
  const { env, storeDir } = cleanEnv(options.env);
  const child = spawn(CLI_COMMAND[0], [...CLI_COMMAND.slice(1), ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  }) as CliProcess;
  const output = { stdout: '', stderr: '' };
  child.output = output;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  // A process that exits without reading its stdin makes our write fail with EPIPE: not a test failure.
  child.stdin!.on('error', () => {});
  if (options.input !== undefined) child.stdin!.end(options.input);

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs ?? 30_000);
  child.result = new Promise<CliResult>((resolve) => {
    const done = (code: number | null, signal: NodeJS.Signals | null): void => {
      clearTimeout(timer);
      if (storeDir !== undefined) fs.rmSync(storeDir, { recursive: true, force: true });
      resolve({ code, signal, stdout: output.stdout, stderr: output.stderr, timedOut });
    };
    // 'close' (not 'exit'): fires after stdout and stderr have been read to the end.
    child.once('close', done);
    child.once('error', (error) => {
      output.stderr += `[spawnCli] ${error.message}\n`;
      done(null, null);
    });
  });
  return child;
}

/** Runs the CLI to completion (stdin is closed after `options.input`, if any). */
export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const child = spawnCli(args, options);
  if (options.input === undefined) child.stdin!.end();
  return child.result;
}

/**
 * Resolves with the output text so far once `pattern` matches it (stdout by default); rejects
 * when the process ends first or after `timeoutMs` (default 10000), with the output in the message.
 */
export function waitForOutput(
  child: CliProcess,
  pattern: RegExp | string,
  options: { stream?: 'stdout' | 'stderr'; timeoutMs?: number } = {},
): Promise<string> {
  const stream = options.stream ?? 'stdout';
  const matches = (): boolean =>
    typeof pattern === 'string' ? child.output[stream].includes(pattern) : pattern.test(child.output[stream]);
  return new Promise<string>((resolve, reject) => {
    if (matches()) {
      resolve(child.output[stream]);
      return;
    }
    const cleanup = (): void => {
      clearTimeout(timer);
      child[stream]!.off('data', onData);
      child.off('close', onClose);
    };
    const onData = (): void => {
      // Our own 'data' listener (added in spawnCli, so it ran first) has appended the chunk.
      if (matches()) {
        cleanup();
        resolve(child.output[stream]);
      }
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error(`CLI exited before ${stream} matched ${String(pattern)}\nstdout: ${child.output.stdout}\nstderr: ${child.output.stderr}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Timed out waiting for ${stream} to match ${String(pattern)}\nstdout: ${child.output.stdout}\nstderr: ${child.output.stderr}`));
    }, options.timeoutMs ?? 10_000);
    child[stream]!.on('data', onData);
    child.on('close', onClose);
  });
}

/** The non-empty lines of a text (stderr is usually checked to be exactly one line). */
export function lines(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => line.trim() !== '');
}

// Runs the BUILT command line (`dist/cli/main.js`, so `npm run build` / `npx tsc -p .` first) as a
// subprocess, the way users and CI scripts run it (started through test/helpers/processes.ts: it
// ends with the test that started it). Shared by every test file that drives the CLI.
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
// The environment is CLEAN: only PATH, HOME and the temporary folder are inherited (and Node's
// compile cache, as by every process the suite starts: test/helpers/processes.ts), never
// LEAD_API_* or LEAD_ENRICH_* from the parent, so a developer's real token can never reach a test
// (or a test's output). `LEAD_ENRICH_STORE` points into a fresh temporary
// directory (removed when the process ends) unless `options.env` names it. `options.env` is
// applied last; a value of `undefined` removes the variable.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { start, type ProcessResult, type Started } from './processes.js';
import { makeTempDir } from './temp-dirs.js';

/** The repository root (where package.json is). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built entry point that `package.json#bin` names; it starts `dist/cli/bundle.js`. */
export const CLI_PATH = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
const BUNDLE_PATH = path.join(REPO_ROOT, 'dist', 'cli', 'bundle.js');
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
  /** The process (with what it started) is killed with SIGKILL after this long (result.timedOut = true). Default 30000. */
  timeoutMs?: number;
  /**
   * Starts as `sh` waiting for a line on stdin, then becomes the CLI (exec: the same process id)
   * once that line is written: a test knows the run's pid before the run does anything.
   */
  held?: boolean;
}

/** Exit status (null when killed by a signal), signal, the output, and whether timeoutMs ran out. */
export type CliResult = ProcessResult;

/** The CLI as a process (test/helpers/processes.ts): `result`, and `output` updated live. */
export type CliProcess = Started;

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

let buildChecked = process.env.LEAD_ENRICH_TEST_EXE !== undefined;
/**
 * Throws unless the bundle the CLI runs (dist/cli/bundle.js, which `npm run build` makes after
 * compiling) is newer than the compiler's last build, whose record (tsconfig.json's tsBuildInfoFile)
 * it rewrites whenever it writes an output: after `npx tsc -p .` alone the CLI would run the code as
 * it was, and the tests pass or fail on that. (Not compared with src/: the compiler writes only what
 * changed, so a source touched but not changed stays newer than its output.)
 */
export function refuseStaleBuild(): void {
  if (buildChecked) return;
  const refuse = (what: string): never => {
    throw new Error(`dist/cli/bundle.js, which the CLI runs, ${what}: run \`npm run build\` (npm test builds first)`);
  };
  if (!fs.existsSync(BUNDLE_PATH)) refuse('is missing');
  const compiled = fs.statSync(path.join(REPO_ROOT, 'dist', '.tsbuildinfo'), { throwIfNoEntry: false });
  if (compiled !== undefined && fs.statSync(BUNDLE_PATH).mtimeMs < compiled.mtimeMs) refuse("is older than the compiler's last build (dist/.tsbuildinfo)");
  buildChecked = true;
}

/**
 * Starts `node dist/cli/main.js ...args` (or the executable, above) and returns the child at once,
 * for tests that send signals or read output while it runs. stdin stays open unless `options.input`
 * is given (then it is written and closed); call `child.stdin.end()` yourself otherwise if the
 * command reads it.
 */
export function spawnCli(args: string[], options: CliOptions = {}): CliProcess {
  refuseStaleBuild();
  const { env, storeDir } = cleanEnv(options.env);
  const command = options.held ? ['sh', '-c', 'read -r go && exec "$@"', 'sh', ...CLI_COMMAND, ...args] : [...CLI_COMMAND, ...args];
  const child = start(command[0]!, command.slice(1), {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    input: options.input,
    timeoutMs: options.timeoutMs,
  });
  if (storeDir !== undefined) void child.result.then(() => fs.rmSync(storeDir, { recursive: true, force: true }));
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
  const matches = (): boolean => (typeof pattern === 'string' ? child.output[stream].includes(pattern) : pattern.test(child.output[stream]));
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

/**
 * How long the CLI takes, on this machine as loaded as it is now, to start, refuse a bad option in
 * one line and exit (ms): what a time bound on a run's start or end may be measured against.
 */
export async function refusalMs(): Promise<number> {
  const started = Date.now();
  const r = await runCli(['enrich', 'in.csv', '--budget', 'abc'], { cwd: tempDir() });
  if (r.code !== 1) throw new Error(`a run with --budget abc exited ${r.code}, not 1: ${r.stderr}`);
  return Date.now() - started;
}

/**
 * How much slower than idle this machine is now, in ms, at most `capMs`: `refusalMs()` less the
 * 600 ms such a refusal takes idle (0.4-0.6 s; 6 s at a load average of 14 on 2 cores). A time bound
 * on a run grows by it; the cap keeps the bound under what the failure it guards against would take.
 */
export async function slowerThanIdleMs(capMs = Number.POSITIVE_INFINITY): Promise<number> {
  return Math.min(capMs, Math.max(0, (await refusalMs()) - 600));
}

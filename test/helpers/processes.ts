// Every process a test starts goes through here: the CLI, node scripts, npm, sh, `script`,
// redis-server, LibreOffice. When the test that started it ends (passed, failed or timed out; a
// process started outside a test, in a beforeAll, when its test file ends: test/support/
// end-processes.ts, a setup file of every project), whatever of it still runs is killed with
// everything it started in turn: its descendants, found in /proc by their parents, and any process
// carrying the test's mark (SUITE_TEST, inherited by children, even those whose parent has gone).
// They stay in the test runner's process group and session: a session of their own (`detached`)
// would also give each a CPU share of its own (Linux's autogroups), as large as the whole runner's,
// and change the timing of every test on a loaded machine. Each also carries SUITE_MARK, and is
// listed with its start time in the run folder's STARTED file (redis-server writes its title over
// its environment: the list still knows it): the run's teardown (test/support/global-setup.ts)
// finds by them any process that outlived its test and fails the run naming it, and the next run
// finds those of a run that was killed.
//
//   const child = start('npm', ['pack'], { cwd });      // a ChildProcess, plus:
//   const text = child.output.stdout;                   // everything written so far, live
//   const r = await child.result;                       // { code, signal, stdout, stderr, timedOut }
//   const r = await run('sh', ['-c', script]);          // start, stdin closed, the result
//   const r = runSync('redis-server', ['--version']);  // quick tools and probes (spawnSync)
//   const out = runChecked('openssl', args);           // the same, throwing when it fails
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { descendantsOf, environOf, processTable, startOf } from './process-table.js';

/** The variable every started process carries: its value is the run's temporary folder. */
export const SUITE_MARK = 'LEAD_ENRICH_SUITE_PROCESS';
/** The variable every started process carries: its value names the test (or file) that started it. */
export const SUITE_TEST = 'LEAD_ENRICH_SUITE_TEST';
/** The file in the run's temporary folder listing `<pid> <start>` of every process started. */
export const STARTED = '.started-processes';

/**
 * A time after which a process or a test is taken to hang: `ms`, twice that when no core was idle
 * as the run started (test/vitest.config.ts): such a bound catches a hang, not a slow machine.
 * Every process's `timeoutMs` goes through it, and the e2e tests' own time bounds.
 */
export function hangBound(ms: number): number {
  return process.env[`LEAD_ENRICH_SUITE_BUSY`] ? 2 * ms : ms;
}

export interface StartOptions {
  cwd?: string;
  /** The process's whole environment (default: this process's); SUITE_MARK is added to it. */
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed. Without it stdin stays open (a pipe) unless 'ignore'. */
  input?: string | Buffer;
  stdin?: 'pipe' | 'ignore';
  /** Killed (with what it started) after this long (result.timedOut): hangBound of it (default 30000); Infinity: only with its test. */
  timeoutMs?: number;
  /**
   * In a process group and session of its own, for a test that signals the group as a terminal's
   * Ctrl-C would (process.kill(-pid)). It then also gets a CPU share of its own (see above).
   */
  ownGroup?: boolean;
}

export interface ProcessResult {
  /** Exit status, or null when the process was killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the helper killed the process because `timeoutMs` ran out. */
  timedOut: boolean;
}

export interface Started extends ChildProcess {
  /** Settles (never rejects) when the process has exited and its output is fully read. */
  result: Promise<ProcessResult>;
  /** Everything written so far; updated live. */
  output: { stdout: string; stderr: string };
}

/** The processes one test (or, outside tests, the test file) started. */
class Scope {
  readonly id = randomBytes(6).toString('hex');
  readonly children = new Set<Started>();
  ended = false;
}
const fileScope = new Scope();
const scopes = new AsyncLocalStorage<Scope>();
/** Children whose output has closed (and which have exited). */
const closed = new WeakSet<ChildProcess>();

/**
 * The environment a started process gets: `env` (or this process's) and the suite's marks, and
 * Node's compile cache of the run (test/support/global-setup.ts) unless `env` names one: a CLI
 * started then costs about 0.08 s less CPU, and nothing else changes.
 */
function markedEnv(env: NodeJS.ProcessEnv = process.env, scope = scopes.getStore() ?? fileScope): NodeJS.ProcessEnv {
  const cache = process.env.NODE_COMPILE_CACHE === undefined ? {} : { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE };
  return { ...cache, ...env, [SUITE_MARK]: os.tmpdir(), [SUITE_TEST]: scope.id };
}

/**
 * Kills `pids`, the processes they started (and so on), and every process carrying the mark of
 * `scope`, found in /proc (where there is none, `pids` alone).
 */
function killWithDescendants(pids: number[], scope: Scope): void {
  const table = processTable();
  const mark = `${SUITE_TEST}=${scope.id}`;
  const marked = table.filter((p) => environOf(p.pid).includes(mark)).map((p) => p.pid);
  const roots = [...pids, ...marked];
  for (const pid of new Set([...roots, ...descendantsOf(roots, table)])) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/** Collects the output of `child` (as `output`, live) and settles `result` when it has closed. */
function collect(child: Started, command: string, timer: () => boolean): void {
  const output = { stdout: '', stderr: '' };
  child.output = output;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  child.result = new Promise<ProcessResult>((resolve) => {
    const done = (code: number | null, signal: NodeJS.Signals | null): void => {
      const timedOut = timer();
      closed.add(child);
      resolve({ code, signal, stdout: output.stdout, stderr: output.stderr, timedOut });
    };
    // 'close' (not 'exit'): fires after stdout and stderr have been read to the end.
    child.once('close', done);
    child.once('error', (error) => {
      output.stderr += `[start ${command}] ${error.message}\n`;
      done(null, null);
    });
  });
}

/**
 * Starts `command` and returns it at once, for tests that send signals or read output while it
 * runs; killed, with what it started, when its test ends.
 */
export function start(command: string, args: string[], options: StartOptions = {}): Started {
  const scope = scopes.getStore() ?? fileScope;
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: markedEnv(options.env, scope),
    stdio: [options.stdin ?? 'pipe', 'pipe', 'pipe'],
    detached: options.ownGroup === true,
  }) as Started;
  // A process that exits without reading its stdin makes our write fail with EPIPE: not a test failure.
  child.stdin?.on('error', () => {});
  if (options.input !== undefined) child.stdin?.end(options.input);
  let timedOut = false;
  const timeoutMs = hangBound(options.timeoutMs ?? 30_000);
  const timer = Number.isFinite(timeoutMs)
    ? setTimeout(() => {
        timedOut = true;
        if (child.pid !== undefined) killWithDescendants([child.pid], scope);
      }, timeoutMs)
    : undefined;
  collect(child, command, () => {
    clearTimeout(timer);
    return timedOut;
  });
  const startedAt = child.pid === undefined ? undefined : startOf(child.pid);
  if (startedAt !== undefined) fs.appendFileSync(path.join(os.tmpdir(), STARTED), `${child.pid} ${startedAt}\n`);
  scope.children.add(child);
  // Started by a test that has already ended (it timed out, and its code ran on): not let run.
  if (scope.ended) endScope(scope);
  return child;
}

/** Starts `command`, closes its stdin (after `options.input`, if any), and waits for the result. */
export function run(command: string, args: string[], options: StartOptions = {}): Promise<ProcessResult> {
  const child = start(command, args, options);
  if (options.input === undefined) child.stdin?.end();
  return child.result;
}

/**
 * A quick tool or a probe (`--version`, mkfifo, mount), run to its end before anything else
 * happens: spawnSync, with the suite's mark and a SIGKILL after `timeoutMs` (default 30000).
 */
export function runSync(command: string, args: string[], options: Omit<StartOptions, 'stdin'> = {}): SpawnSyncReturns<string> {
  return spawnSync(command, args, {
    cwd: options.cwd,
    env: markedEnv(options.env),
    input: options.input,
    encoding: 'utf8',
    timeout: hangBound(options.timeoutMs ?? 30_000),
    killSignal: 'SIGKILL',
  });
}

/** runSync's stdout, or an Error naming the command and what it wrote when it fails. */
export function runChecked(command: string, args: string[], options: Omit<StartOptions, 'stdin'> = {}): string {
  const r = runSync(command, args, options);
  if (r.status === 0) return r.stdout;
  const why = r.error?.message ?? (r.status === null ? `killed by ${r.signal}` : `exit ${r.status}`);
  throw new Error(`${command} ${args.join(' ')}: ${why}\n${r.stderr}`);
}

/**
 * Runs `body` (a test, with its hooks) so that the processes it starts are its own: when it
 * ends, those still running, or whose output is still open (a child of theirs holds it), are
 * killed with what they started.
 */
export async function withOwnProcesses(body: () => Promise<unknown>): Promise<void> {
  const scope = new Scope();
  try {
    await scopes.run(scope, body);
  } finally {
    endScope(scope);
  }
}

/** Kills what the test file started outside its tests (a beforeAll's server): its afterAll. */
export function endFileProcesses(): void {
  endScope(fileScope);
  fileScope.ended = false;
}

function endScope(scope: Scope): void {
  scope.ended = true;
  const left = [...scope.children].filter((child) => !closed.has(child));
  scope.children.clear();
  if (left.length === 0) return;
  // A child that has exited is not killed by its pid (which may be another process's by now);
  // what it started is found by the test's mark.
  const running = left.filter((child) => child.pid !== undefined && child.exitCode === null && child.signalCode === null);
  killWithDescendants(
    running.map((child) => child.pid!),
    scope,
  );
}

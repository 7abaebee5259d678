// Every process a test starts goes through here: the CLI, node scripts, npm, sh, `script`,
// redis-server, LibreOffice. Each is started in a process group of its own, and the group is killed
// when the test that started it ends (passed, failed or timed out; a process started outside a
// test, in a beforeAll, when its test file ends): test/support/end-processes.ts, a setup file of
// every project. Each carries SUITE_MARK in its environment, which its own children inherit, and
// is listed with its start time in the run folder's STARTED file (redis-server writes its title
// over its environment: the list still knows it): the run's teardown (test/support/global-setup.ts)
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
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The variable every started process carries: its value is the run's temporary folder. */
export const SUITE_MARK = 'LEAD_ENRICH_SUITE_PROCESS';
/** The file in the run's temporary folder listing `<pid> <start>` of every process started. */
export const STARTED = '.started-processes';

/**
 * Field 22 of /proc/<pid>/stat (when the process started, which tells it from a later process
 * given the same pid), or undefined where there is no such process, or only its zombie (a killed
 * process whose parent has not reaped it), or no /proc.
 */
export function startOf(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces: the 3rd field on.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

export interface StartOptions {
  cwd?: string;
  /** The process's whole environment (default: this process's); SUITE_MARK is added to it. */
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed. Without it stdin stays open (a pipe) unless 'ignore'. */
  input?: string | Buffer;
  stdin?: 'pipe' | 'ignore';
  /** The process group is killed with SIGKILL after this long (result.timedOut). Default 30000; Infinity: only with its test. */
  timeoutMs?: number;
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
  readonly children = new Set<Started>();
  ended = false;
}
const fileScope = new Scope();
const scopes = new AsyncLocalStorage<Scope>();
/** Children whose output has closed (and which have exited). */
const closed = new WeakSet<ChildProcess>();

/** The environment a started process gets: `env` (or this process's) and the suite's mark. */
export function markedEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, [SUITE_MARK]: os.tmpdir() };
}

/** Kills the process group `child` leads (its children and theirs, unless they left the group). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    if (process.platform === 'win32') child.kill('SIGKILL');
    else process.kill(-child.pid, 'SIGKILL');
  } catch {
    // ESRCH: the group has no process left
  }
}

/**
 * Starts `command` in a process group of its own and returns it at once, for tests that send
 * signals or read output while it runs; killed (the group) when its test ends.
 */
export function start(command: string, args: string[], options: StartOptions = {}): Started {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: markedEnv(options.env),
    stdio: [options.stdin ?? 'pipe', 'pipe', 'pipe'],
    detached: process.platform !== 'win32',
  }) as Started;
  const output = { stdout: '', stderr: '' };
  child.output = output;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));
  // A process that exits without reading its stdin makes our write fail with EPIPE: not a test failure.
  child.stdin?.on('error', () => {});
  if (options.input !== undefined) child.stdin?.end(options.input);

  let timedOut = false;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const timer = Number.isFinite(timeoutMs)
    ? setTimeout(() => {
        timedOut = true;
        killGroup(child);
      }, timeoutMs)
    : undefined;
  child.result = new Promise<ProcessResult>((resolve) => {
    const done = (code: number | null, signal: NodeJS.Signals | null): void => {
      clearTimeout(timer);
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
  const startedAt = child.pid === undefined ? undefined : startOf(child.pid);
  if (startedAt !== undefined) fs.appendFileSync(path.join(os.tmpdir(), STARTED), `${child.pid} ${startedAt}\n`);
  const scope = scopes.getStore() ?? fileScope;
  scope.children.add(child);
  // Started by a test that has already ended (it timed out, and its code ran on): not let run.
  if (scope.ended) killGroup(child);
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
    timeout: options.timeoutMs ?? 30_000,
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
 * killed with their group.
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
  for (const child of scope.children) {
    // Once the leader has exited and its output has closed, its group is most likely empty, and
    // its number may lead someone else's group by now: only a group known to be ours is killed
    // (a child that left its output and lived on is what the run's teardown finds).
    const running = child.exitCode === null && child.signalCode === null;
    if (running || !closed.has(child)) killGroup(child);
  }
  scope.children.clear();
}

// One command of a night, run the way its night asks: in this process (most nights: the command
// line's own runCli with an io that keeps what it says, as cli-process.ts would print it), or as a child
// process of the built CLI on the same simulated clock (a night that kills it with a real SIGKILL,
// or a second run beside the first). Either way the result is the exit status, stdout's --json
// object, stderr's lines, and when the run began and ended on the simulated clock.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli, UsageError } from '../../dist/cli/commands.js';
import { fatalOf, tellFatal } from '../../dist/cli/fatal.js';
import { clockOffset } from './clock.js';
import { CHILD_LOG } from './in-process-requests.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(HERE, '../../dist/cli/main.js');
const CLOCK = path.join(HERE, 'clock.js');
// SIM_DEBUG=1: each child logs the lookups it sends (child-requests.js).
const DEBUG_IMPORTS = CHILD_LOG ? ['--import', path.join(HERE, 'child-requests.js')] : [];
const children = new Set();

function parsed(stdout) {
  try {
    return JSON.parse(stdout);
  } catch {
    return undefined;
  }
}

/** The test suite's marks on its processes (test/helpers/processes.ts), passed on so that a child ends with its test. */
function suiteMarks() {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('LEAD_ENRICH_SUITE_')));
}

/** The command line in this process, as cli-process.ts runs it (its fatal line and JSON included). */
export async function runInProcess(args) {
  const io = {
    out: (text) => (stdout += text),
    err: (line) => stderr.push(line),
    setStatus: (s) => (status = s),
    isTty: false,
    json: args.includes('--json') ? 'out' : undefined,
  };
  let stdout = '';
  const stderr = [];
  let status = 0;
  const startedAt = Date.now();
  // enrich keeps a SIGINT/SIGTERM listener until its process exits; here the process goes on.
  const listeners = { SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
  try {
    await runCli(args, io);
  } catch (error) {
    const fatal = fatalOf(error, (e) => e instanceof UsageError);
    status = fatal.status;
    // SIM_DEBUG=1: the fatal error's stack and its cause's, printed under a failing night.
    if (process.env.SIM_DEBUG) stderr.push(String(error?.stack), String(error?.cause?.stack));
    await tellFatal(io, fatal);
  } finally {
    for (const [signal, kept] of Object.entries(listeners))
      for (const listener of process.listeners(signal)) if (!kept.includes(listener)) process.removeListener(signal, listener);
  }
  return { args, how: 'in-process', status, signal: null, stdout, stderr, json: parsed(stdout), startedAt, endedAt: Date.now(), killed: false };
}

/**
 * The built CLI as a child process on the simulated clock. `killWhen()` is asked every few ms:
 * true kills the process with SIGKILL (the result says `killed`). `started` resolves once it runs.
 */
export function runChild(args, env, { killWhen } = {}) {
  const startedAt = Date.now();
  const child = spawn(process.execPath, ['--import', CLOCK, ...DEBUG_IMPORTS, CLI, ...args], {
    env: {
      ...suiteMarks(),
      PATH: process.env.PATH,
      TMPDIR: process.env.TMPDIR ?? '/tmp',
      // The test run's cache of compiled code: each start costs less CPU, nothing else changes.
      ...(process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {}),
      ...env,
      SIMULATED_CLOCK_OFFSET_MS: String(clockOffset()),
      ...(CHILD_LOG ? { SIM_CHILD_LOG: CHILD_LOG } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  let killed = false;
  const watch = killWhen
    ? setInterval(() => {
        if (!killed && killWhen()) {
          killed = true;
          child.kill('SIGKILL');
        }
      }, 2)
    : undefined;
  return new Promise((resolve) => {
    child.on('close', (status, signal) => {
      clearInterval(watch);
      children.delete(child);
      resolve({
        args,
        how: 'child',
        pid: child.pid,
        status,
        signal,
        stdout,
        stderr: stderr.split('\n').filter((line) => line !== ''),
        json: parsed(stdout),
        startedAt,
        endedAt: Date.now(),
        killed: killed && signal === 'SIGKILL',
      });
    });
  });
}

/** Ends the children still running (the simulation itself was stopped). */
export function killChildren() {
  for (const child of children) child.kill('SIGKILL');
}

// The processes the suite started, found in /proc by the mark test/helpers/processes.ts gives each
// (their children inherit it), or by the run folder's list of what it started (pid and start
// time): those of this run still running at its end, and those a killed run left behind. Linux
// only (where /proc is): elsewhere none is found.
import fs from 'node:fs';
import path from 'node:path';
import { commandOf, environOf, processTable, startOf } from '../helpers/process-table.js';
import { STARTED, SUITE_MARK } from '../helpers/processes.js';

export interface SuiteProcess {
  pid: number;
  /** The run folder of the run that started it. */
  run: string;
  command: string;
}

/** The processes the run of `folder` listed as started that still run (the same pid and start time). */
function listedIn(folder: string): SuiteProcess[] {
  let listed: string;
  try {
    listed = fs.readFileSync(path.join(folder, STARTED), 'utf8');
  } catch {
    return [];
  }
  return listed
    .split('\n')
    .map((line) => line.split(' '))
    .filter(([pid, start]) => pid !== undefined && start !== undefined && startOf(Number(pid)) === start)
    .map(([pid]) => ({ pid: Number(pid), run: folder, command: commandOf(Number(pid)) }));
}

/** The processes of the runs of `folders` still running: marked, or listed as started by them. */
export function processesOf(folders: string[]): SuiteProcess[] {
  const found = new Map<number, SuiteProcess>();
  for (const p of [...suiteProcesses().filter((q) => folders.includes(q.run)), ...folders.flatMap(listedIn)]) found.set(p.pid, p);
  return [...found.values()];
}

/** Every process carrying the suite's mark (and readable: one of this user's). */
export function suiteProcesses(): SuiteProcess[] {
  const mark = `${SUITE_MARK}=`;
  return processTable().flatMap(({ pid }) => {
    const run = environOf(pid).find((entry) => entry.startsWith(mark));
    return run === undefined ? [] : [{ pid, run: run.slice(mark.length), command: commandOf(pid) }];
  });
}

/** Kills `processes` (SIGKILL) and waits, up to 2 s, until none of them is left; returns them. */
export async function killAll(processes: SuiteProcess[]): Promise<SuiteProcess[]> {
  for (const { pid } of processes) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (let waited = 0; waited < 2000 && processes.some((p) => startOf(p.pid) !== undefined); waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return processes;
}

/** "pid 123 (node dist/cli/main.js enrich …)": a process as a message names it. */
export function describeProcess({ pid, command }: SuiteProcess): string {
  return `pid ${pid} (${command.length > 120 ? `${command.slice(0, 117)}...` : command})`;
}

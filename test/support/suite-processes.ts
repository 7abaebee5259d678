// The processes the suite started, found by the mark test/helpers/processes.ts gives each (their
// children inherit it) in /proc: those of this run still running at its end, and those a killed
// run left behind. Linux only (where /proc is): elsewhere none is found.
import fs from 'node:fs';
import { SUITE_MARK } from '../helpers/processes.js';

export interface SuiteProcess {
  pid: number;
  /** The run folder of the run that started it. */
  run: string;
  command: string;
}

/** Every process carrying the suite's mark (and readable: one of this user's). */
export function suiteProcesses(): SuiteProcess[] {
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const found: SuiteProcess[] = [];
  const mark = `${SUITE_MARK}=`;
  for (const pid of pids) {
    try {
      const run = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((entry) => entry.startsWith(mark));
      if (run === undefined) continue;
      const command = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      found.push({ pid: Number(pid), run: run.slice(mark.length), command });
    } catch {
      // gone since the listing, or another user's
    }
  }
  return found;
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
  const pids = new Set(processes.map((p) => p.pid));
  for (let waited = 0; waited < 2000 && suiteProcesses().some((p) => pids.has(p.pid)); waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return processes;
}

/** "pid 123 (node dist/cli/main.js enrich …)": a process as a message names it. */
export function describeProcess({ pid, command }: SuiteProcess): string {
  return `pid ${pid} (${command.length > 120 ? `${command.slice(0, 117)}...` : command})`;
}

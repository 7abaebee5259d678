// The machine's processes as /proc shows them (Linux; elsewhere none): their parents, start times,
// environments and command lines, for test/helpers/processes.ts, which kills what a test started
// with everything that started in turn, and for the run's own checks (test/support/).
import fs from 'node:fs';

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces): the 3rd field on. */
function statOf(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * When `pid` started (field 22 of its stat, which tells it from a later process given the same
 * pid), or undefined where there is no such process, or only its zombie (a killed process whose
 * parent has not reaped it), or no /proc.
 */
export function startOf(pid: number): string | undefined {
  const fields = statOf(pid);
  return fields === undefined || fields[0] === 'Z' ? undefined : fields[19];
}

/** Every process's pid and parent's pid; none where there is no /proc. */
export function processTable(): Array<{ pid: number; ppid: number }> {
  let names: string[];
  try {
    names = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const fields = statOf(Number(name));
    return fields === undefined || fields[0] === 'Z' ? [] : [{ pid: Number(name), ppid: Number(fields[1]) }];
  });
}

/** The processes started by `roots`, by theirs, and so on (not `roots` themselves). */
export function descendantsOf(roots: number[], table: Array<{ pid: number; ppid: number }>): number[] {
  const found = new Set<number>();
  let parents = new Set(roots);
  while (parents.size > 0) {
    const children = table.filter((p) => parents.has(p.ppid) && !found.has(p.pid) && !roots.includes(p.pid)).map((p) => p.pid);
    children.forEach((pid) => {
      found.add(pid);
    });
    parents = new Set(children);
  }
  return [...found];
}

/** The environment of `pid` ("NAME=value" entries); none when it is gone or not this user's. */
export function environOf(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

/** The command line of `pid` ('' once gone). */
export function commandOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

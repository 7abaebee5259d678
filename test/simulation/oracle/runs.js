// Which runs were going at a moment, and how each ended: what the other checks ask of the night's runs.

/** A run that ended without finishing its work: killed, or a fatal error (a full disk, a store that failed). */
export const died = (run) => run.killed || run.status === 1;

/** A run that finished and wrote its outputs (whatever its exit status says it met). */
export const finished = (run) => !run.killed && run.status !== null && run.status !== 1 && run.status !== 130;

/** The runs going at `at` (simulated ms). */
export function runsAt(runs, at) {
  return runs.filter((run) => run.startedAt <= at && at <= run.endedAt);
}

/** "2028-02-29T03:15:02.118Z" */
export const iso = (ms) => new Date(ms).toISOString();

/** `30d`, `12h`, `3s` as ms (the simulation's own durations only). */
export function durationMs(text) {
  const match = /^(\d+)([dhms])$/.exec(text);
  if (!match) throw new Error(`simulation: unknown duration ${text}`);
  return Number(match[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 }[match[2]];
}

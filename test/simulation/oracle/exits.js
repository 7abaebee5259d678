// Every run's exit status is one its night's conditions call for (docs/cli-contract.md, "Exit
// status of `enrich`"), and its --json object is there and agrees with it and with the output.
import { parse } from 'csv-parse/sync';

/**
 * The codes a full disk ends a run with: the store or an output that cannot be written, and a store
 * that cannot even be opened on its full disk (SQLite says "I/O error" there: a `config` error).
 */
const DISK_CODES = { store: ['store_failed', 'config'], outputs: ['unwritable_output', 'store_failed'] };

/** The stops a night's conditions allow, by `stoppedBy`. */
function allowedStops(night) {
  const stops = new Set(['budget']);
  if (night.lowCredits !== undefined) stops.add('credits');
  if (night.dailyLimit !== undefined) stops.add('daily_limit');
  if (night.outage?.long) stops.add('api_unavailable');
  return stops;
}

/** Why a run's exit status is not one its night calls for, or undefined. */
function judgeStatus(night, run, mainRun) {
  const { status, json } = run;
  if (status === 1) {
    const code = json?.error?.code;
    if (run.command === 'main again' && run.lockHeld && run.endedAt < mainRun.endedAt)
      return code === 'output_locked' ? undefined : `the second copy of the command exited 1 with ${code}, not output_locked (${json?.error?.message})`;
    if (night.diskFull && DISK_CODES[night.diskFull.disk].includes(code)) return undefined;
    return `exit 1 (${code}: ${json?.error?.message ?? run.stderr.at(-1)})`;
  }
  if (run.command === 'main again' && run.lockHeld && run.endedAt < mainRun.endedAt)
    return `the same command, started while the first ran, exited ${status} (its output is in use: 1)`;
  if (status === 3 || (status === 2 && json?.stoppedBy === 'api_unavailable'))
    return allowedStops(night).has(json?.stoppedBy) ? undefined : `exit ${status}, stopped by ${json?.stoppedBy}, which no condition of the night calls for`;
  if (status === 0 || status === 5) return undefined;
  // A long outage met by a few rows: they end in error after their retries (rows.js).
  if (status === 2 && night.outage?.long) return undefined;
  return `exit ${status}${json?.stoppedBy ? ` (stopped by ${json.stoppedBy})` : ''}: no condition of the night calls for it`;
}

/** The output's rows by status, as --json counts them. */
function countsOf(text) {
  const counts = { found: 0, not_found: 0, error: 0, skipped: 0 };
  if (text === undefined) return undefined;
  for (const row of parse(text, { columns: true, skip_empty_lines: true })) counts[row.lead_status] = (counts[row.lead_status] ?? 0) + 1;
  return counts;
}

export function checkExits({ night, runs, hasMalformed }) {
  const failures = [];
  const mainRun = runs.find((run) => run.command === 'main');
  for (const run of runs.filter((r) => !r.killed)) {
    const say = (text) => failures.push(`${run.command}: ${text}`);
    if (run.status === null) {
      say(`ended by ${run.signal}`);
      continue;
    }
    if (!run.json || run.json.exitCode !== run.status || typeof run.json.version !== 'string') {
      say(`exit ${run.status} with no --json object that says so (stdout: ${run.stdout.slice(0, 120)})`);
      continue;
    }
    const why = judgeStatus(night, run, mainRun);
    if (why) say(why);
    if (run.status === 5 && !hasMalformed) say('exit 5 with no malformed key in the file');
    if (run.status === 0 && hasMalformed) say('exit 0 though the file holds a malformed key');
    if (run.status === 1) continue;
    const counts = countsOf(run.outputText);
    if (counts && JSON.stringify(counts) !== JSON.stringify(run.json.status))
      say(`--json counts ${JSON.stringify(run.json.status)}, the output holds ${JSON.stringify(counts)}`);
  }
  return failures;
}

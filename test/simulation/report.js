// What the simulation prints: a line per night, the failures with their replay, and at the end the
// invariants' figures and the table of how often each condition happened.
import fs from 'node:fs';
import { CONDITIONS } from './conditions.js';
import { replayCommand } from './options.js';

const day = (ms) => new Date(ms).toISOString().slice(0, 10);
const kib = (bytes) => `${Math.round(bytes / 1024)} KiB`;

function runWords(run) {
  if (run.killed) return `${run.command}: killed`;
  const why = run.json?.stoppedBy ?? run.json?.error?.code;
  return `${run.command}: ${run.status}${why ? ` ${why}` : ''} ${((run.endedAt - run.startedAt) / 1000).toFixed(1)}s`;
}

export function printNight(out, night, runs, seen, figures, failures) {
  out(`night ${night.n + 1} ${day(night.date)}  ${runs.map(runWords).join(', ')}  [${[...seen].join(', ')}]  store ${kib(figures.storeBytes)}`);
  for (const [check, words] of failures) out(`  FAIL ${check}: ${words}`);
  // What each run said on stderr: the first thing a replay needs (the --json object says less).
  if (failures.length > 0)
    for (const run of runs)
      for (const line of (run.stderr ?? [])
        .flatMap((text) => String(text).split('\n'))
        .filter(Boolean)
        .slice(process.env.SIM_DEBUG ? -80 : -STDERR_LINES))
        out(`    ${run.command} said: ${line}`);
}

/** The last lines of each run's stderr printed under a failing night. */
const STDERR_LINES = 6;

/**
 * Prints the figures and the table of the `ran` nights run (all of them, or up to the first that
 * failed); returns the conditions seen fewer than five times in a year, judged on a whole year only.
 */
export function printFigures(out, { world, options, plan, oracle, table, seconds, ran, canFillDisks }) {
  const f = oracle.figures;
  out('');
  const nights = ran < options.nights ? `${ran} of ${options.nights} nights (stopped at the first failing night)` : `${options.nights} nights`;
  out(`seed ${world.seed}, ${nights}, trace ${plan.hash}, ${seconds.toFixed(1)} s (the oracle ${f.oracleSeconds.toFixed(1)} s)`);
  out(
    `  spend: max day ${f.maxDay} of ${world.dayBudget}/day, max month ${f.maxMonth} of ${world.monthBudget}/month (credits reaching the sandbox just after midnight: ${f.boundaryCredits})`,
  );
  out(`  keys paid twice: ${f.paidTwice} (by two runs side by side: ${f.paidSideBySide})`);
  out(
    `  changes: expected ${f.changes.expected}, reported ${f.changes.reported}, lost ${f.changes.lost}, duplicated ${f.changes.duplicated} (listed again after a run killed between its file and its marks: ${f.changes.listedAgainAfterKill}), not yet due ${f.changes.pending}`,
  );
  out(
    `  store: ${kib(f.storeBytes)} after the last night (at most ${kib(f.maxStoreBytes)}), ledger ${f.ledgerRows} per-call rows; lowest balance ${f.lowestBalance} (reserve ${world.reserve})`,
  );
  out('  conditions (nights):');
  const year = ran >= 365;
  const shortOfFive = [];
  for (const [name, words, calendar] of CONDITIONS) {
    const count = table.get(name) ?? 0;
    const exempt = calendar || (!canFillDisks && name.endsWith(' full'));
    if (year && !exempt && count < 5) shortOfFive.push(name);
    out(`    ${String(count).padStart(4)}  ${words}${year && !exempt && count < 5 ? '  (fewer than 5)' : ''}`);
  }
  if (shortOfFive.length > 0) out(`  FAIL: conditions seen fewer than five times in a year: ${shortOfFive.join(', ')}`);
  out(`  same seed again: ${replayCommand(options, options.nights)}`);
  return shortOfFive;
}

export function writeSummary(file, summary) {
  fs.writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
}

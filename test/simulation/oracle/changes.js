// Every change is reported exactly once over the run, the sandbox's drift being the truth: each
// time a key's stored answer was replaced by one whose truth differs, its changed fields are
// expected in a --changes file. A change is due once a run with --changes that finished started
// after it was found (or found it itself); due and never listed is lost; listed twice is a
// duplicate; listed but not a change (or with the wrong cells) is a phantom.
import { parse } from 'csv-parse/sync';
import { epochOf } from './answers.js';
import { finished, iso, runsAt } from './runs.js';
import { changedFields, truthCells } from './truth.js';

const NAMED = 3;
const idOf = (key, field, afterAt) => `${key}|${field}|${afterAt}`;

/** Which run found a change: "the other cron line", "the nightly command, killed", … */
function finderWords(allRuns, at) {
  const words = runsAt(allRuns, at).map(
    (run) =>
      `${run.command === 'second' ? 'the other cron line' : 'the nightly command'}${run.killed ? ', killed' : run.status === 1 ? ', exit 1' : ''} of night ${run.night}`,
  );
  return words.join(' or ') || 'no run';
}

/** The changes the store's answers hold, by id. */
function expectedChanges({ sandbox, store, state }) {
  const expected = new Map();
  for (const [key, answers] of store.byKey) {
    for (let i = 1; i < answers.length; i += 1) {
      const [a, b] = [answers[i - 1], answers[i]];
      // From a damaged answer (damage.js) a run may report a change from an unknown answer, or none.
      if (state.damaged.has(`${key}|${a.fetchedAt}`)) {
        state.unknownBefore.add(`${key}|${b.fetchedAt}`);
        continue;
      }
      const before = truthCells(sandbox, key, epochOf(state, a));
      const after = truthCells(sandbox, key, epochOf(state, b));
      for (const field of changedFields(before, after)) {
        const cell = (cells) => (field === 'status' ? cells.status : cells[field]);
        expected.set(idOf(key, field, b.fetchedAt), { key, field, before: cell(before), after: cell(after), beforeAt: a.fetchedAt, afterAt: b.fetchedAt });
      }
    }
  }
  return expected;
}

/**
 * Adds the night's --changes files to state.reported (id -> lines listing it): a finished run's,
 * and a killed run's whose file is in place (renamed whole: a killed run leaves no partial file
 * under the name). The contract marks a run's changes reported once its file is in place: a run
 * killed after that has reported them, and one killed between the rename and the marking lists
 * them twice (docs/cli-contract.md, "Two runs with --changes at once": one of the two moments).
 */
function collect(runs, state) {
  for (const run of runs.filter((r) => (finished(r) || r.killed) && r.changesText !== undefined)) {
    for (const line of parse(run.changesText, { columns: true, skip_empty_lines: true })) {
      const id = idOf(line.key, line.field, Date.parse(line.after_fetched_at));
      state.reported.set(id, [...(state.reported.get(id) ?? []), { ...line, night: run.night, killed: run.killed }]);
    }
  }
}

/** Listed more than once, but for the moment the contract names: every listing before the last was a killed run's. */
const twiceAfterKill = (lines) => lines.slice(0, -1).every((line) => line.killed);

export function checkChanges({ sandbox, store, state, runs, allRuns, figures }) {
  collect(runs, state);
  const expected = expectedChanges({ sandbox, store, state });
  const changesRuns = allRuns.filter((run) => finished(run) && run.files.changes !== undefined);
  const failures = [];
  const unkept = store.replacedWithoutHistory ?? [];
  if (unkept.length > 0) {
    const named = unkept.slice(0, NAMED).map((answer) => `${answer.key} (fetched ${iso(answer.fetchedAt)})`);
    failures.push(`${unkept.length} replaced answers not in the store's history: ${named.join('; ')}${unkept.length > NAMED ? '; …' : ''}`);
  }
  const lost = [];
  let pending = 0;
  for (const [id, change] of expected) {
    if (state.reported.has(id)) continue;
    const finder = runsAt(allRuns, change.afterAt);
    const due = changesRuns.some((run) => run.startedAt > change.afterAt || (finder.length === 1 && finder[0] === run));
    if (!due) pending += 1;
    else if (!state.lost.has(id)) lost.push(change);
  }
  for (const change of lost) state.lost.add(idOf(change.key, change.field, change.afterAt));
  if (lost.length > 0)
    failures.push(
      `${lost.length} changes never reported: ${lost
        .slice(0, NAMED)
        .map((c) => `${c.key} ${c.field} ${c.before} → ${c.after} (found ${iso(c.afterAt)} by ${finderWords(allRuns, c.afterAt)})`)
        .join('; ')}`,
    );
  const duplicated = [];
  const phantom = [];
  let listedAgain = 0;
  for (const [id, lines] of state.reported) {
    const change = expected.get(id);
    if (!change && state.unknownBefore.has(`${lines[0].key}|${Date.parse(lines[0].after_fetched_at)}`)) continue;
    if (!change) phantom.push(`${lines[0].key} ${lines[0].field} ${lines[0].before} → ${lines[0].after} (night ${lines[0].night})`);
    else if (lines.length > 1 && twiceAfterKill(lines)) listedAgain += 1;
    else if (lines.length > 1) duplicated.push(`${change.key} ${change.field} (nights ${lines.map((l) => l.night).join(', ')})`);
    else if (lines[0].before !== change.before || lines[0].after !== change.after || Date.parse(lines[0].before_fetched_at) !== change.beforeAt)
      phantom.push(`${change.key} ${change.field}: listed ${lines[0].before} → ${lines[0].after}, the answers say ${change.before} → ${change.after}`);
  }
  for (const [list, words] of [
    [duplicated, 'changes reported more than once'],
    [phantom, 'changes listed that the answers do not hold'],
  ]) {
    const fresh = list.filter((text) => !state.said.has(text));
    for (const text of fresh) state.said.add(text);
    if (fresh.length > 0) failures.push(`${fresh.length} ${words}: ${fresh.slice(0, NAMED).join('; ')}`);
  }
  Object.assign(figures.changes, {
    expected: expected.size,
    reported: [...state.reported.keys()].filter((id) => expected.has(id)).length,
    lost: state.lost.size,
    duplicated: duplicated.length,
    listedAgainAfterKill: listedAgain,
    pending,
  });
  return failures;
}

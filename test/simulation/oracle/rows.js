// Every row a finished run wrote is right against the sandbox's truth for its answer's fetch time;
// an answer older than --max-age is written only as `stale`; a row once enriched is never blank;
// and no row is `error` but for the file's own malformed keys (the night's faults pass on a retry).
import { parse } from 'csv-parse/sync';
import { epochOf } from './answers.js';
import { durationMs, finished, iso } from './runs.js';
import { rowHolds, truthCells } from './truth.js';

const readCsv = (text) => (text === undefined ? undefined : parse(text, { columns: true, skip_empty_lines: true }));

/** At most this many rows are named in one failure. */
const NAMED = 3;

/** The codes of a row that failed for a reason of the API or the network. */
const API_FAILURES = new Set(['server_error', 'api_failed', 'network', 'timeout', 'bad_response']);

export function checkRows({ sandbox, store, state, runs, night }) {
  const failures = [];
  // The same command again (night.js) is judged as any run when it ran: its files are its own.
  for (const run of runs.filter((r) => finished(r))) {
    // An outage longer than the retries' backoff, met by a few rows only (too few for the API to be
    // judged down: docs/cli-contract.md, "An API that fails"), ends them in error: exit 2.
    const failing = night.outage?.long === true;
    const rows = readCsv(run.outputText);
    if (rows === undefined) {
      failures.push(`${run.command} exited ${run.status} and left no output ${run.files.output}`);
      continue;
    }
    const codes = new Map((readCsv(run.sidecarText) ?? []).map((line) => [Number(line.row), line.error_code]));
    const problems = { wrong: [], old: [], blank: [], error: [] };
    rows.forEach((row, i) => {
      judgeRow({ sandbox, store, state, run, row, number: i + 1, code: codes.get(i + 1), problems, failing });
    });
    const say = (list, words) => list.length > 0 && failures.push(`${run.command}: ${list.length} ${words}: ${list.slice(0, NAMED).join('; ')}`);
    say(problems.wrong, 'rows unlike any answer the sandbox sent for their key');
    say(problems.old, 'rows written from an answer older than --max-age, not as stale');
    say(problems.blank, 'rows enriched before and written blank');
    say(problems.error, 'rows in error that no condition of the night calls for');
  }
  return failures;
}

function judgeRow({ sandbox, store, state, run, row, number, code, problems, failing }) {
  const key = row.email.trim().toLowerCase();
  const answers = (store.byKey.get(key) ?? []).filter((a) => a.fetchedAt <= run.endedAt);
  const status = row.lead_status;
  if (status === 'error') {
    const called = (code === 'invalid_input' && !key.includes('@')) || (failing && API_FAILURES.has(code));
    if (!called) problems.error.push(`row ${number} ${key}: ${code}`);
    return;
  }
  if (status === 'skipped') {
    // Once enriched, never blank; but an answer damaged before the run (damage.js) is lost: the run
    // can only look the key up again, which the stop may not let it do.
    const before = answers.findLast((a) => a.fetchedAt < run.startedAt);
    if (before && !state.damaged.has(`${key}|${before.fetchedAt}`))
      problems.blank.push(`row ${number} ${key} skipped/${code} (answered ${iso(before.fetchedAt)})`);
    return;
  }
  // The newest answer whose truth the row holds.
  const source = answers.findLast((a) => rowHolds(row, truthCells(sandbox, key, epochOf(state, a))));
  if (!source) {
    problems.wrong.push(`row ${number} ${key}: ${status} ${row.lead_title || ''}`.trim());
    return;
  }
  if (row.lead_billing !== 'stale' && source.fetchedAt < run.startedAt - durationMs(run.files.maxAge))
    problems.old.push(`row ${number} ${key} (${row.lead_billing}, fetched ${iso(source.fetchedAt)})`);
}

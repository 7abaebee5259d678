// Every stored answer is one the sandbox sent, with the data it sent at its epoch; and every answer
// it sent was stored, unless the run that received it died first (killed, or stopped by a full disk).
import { isDeepStrictEqual } from 'node:util';
import { died, iso, runsAt } from './runs.js';

/** Matches the store's answers to the sandbox's (memo: state.sources), checks them; returns the failures. */
export function checkAnswers({ sandbox, served, store, state, newServed, allRuns }) {
  const failures = [];
  const matched = new Set();
  for (const answer of store.answers) {
    const id = `${answer.key}|${answer.fetchedAt}`;
    let source = state.sources.get(id);
    if (source === undefined) {
      source = served.sourceOf(answer.key, answer.fetchedAt);
      if (source === undefined) {
        failures.push(`the store holds an answer for ${answer.key} fetched at ${iso(answer.fetchedAt)} that the sandbox never sent`);
        continue;
      }
      state.sources.set(id, source);
      const wrong = wrongData(sandbox, answer, source);
      if (wrong) failures.push(wrong);
    }
    matched.add(source);
  }
  for (const sent of newServed) {
    if (matched.has(sent) || runsAt(allRuns, sent.at).some(died)) continue;
    const by = runsAt(allRuns, sent.at).map((run) => `${run.command} exit ${run.status}`).join(', ') || 'no run';
    failures.push(`the sandbox answered ${sent.key} at ${iso(sent.at)} (${sent.found ? 'found' : 'not found'}, ${sent.credits} credits) and the store never kept it, though no run died (${by})`);
  }
  return failures;
}

function wrongData(sandbox, answer, source) {
  if (answer.found !== source.found) return `the store says ${answer.key} was ${answer.found ? 'found' : 'not found'} at ${iso(answer.fetchedAt)}; the sandbox answered ${source.found ? 'found' : 'not found'}`;
  if (answer.same || !answer.found) return undefined;
  const truth = sandbox.truth('lookup_email', answer.key, source.epoch).data;
  return isDeepStrictEqual(answer.data, truth) ? undefined : `the store's answer for ${answer.key} fetched at ${iso(answer.fetchedAt)} is not what the sandbox sent at epoch ${source.epoch}`;
}

/** The epoch a stored answer was sent at (checkAnswers matched it). */
export function epochOf(state, answer) {
  return state.sources.get(`${answer.key}|${answer.fetchedAt}`)?.epoch;
}

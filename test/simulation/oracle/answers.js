// Every stored answer is one the sandbox sent, with the data it sent at its epoch; and every answer
// it sent was stored, unless the run that received it died first (killed, or stopped by a full disk).
import { isDeepStrictEqual } from 'node:util';
import { MATCH_MS } from './books.js';
import { died, iso, runsAt } from './runs.js';

/**
 * Which served answer each stored one came from, key by key: a stored answer was stamped by its
 * client at most MATCH_MS after the sandbox sent it, and two runs side by side may fetch one key
 * at the same moment, so each stored answer (oldest first) takes the earliest unmatched sent one
 * whose window holds it (the matching that pairs the most).
 */
function matchKey(stored, served) {
  const used = new Set();
  const pairs = [];
  for (const answer of stored) {
    const source = served.find((sent) => !used.has(sent) && sent.at <= answer.fetchedAt && answer.fetchedAt - sent.at <= MATCH_MS);
    if (source) used.add(source);
    pairs.push([answer, source]);
  }
  return pairs;
}

/** Matches the store's answers to the sandbox's (state.sources), checks each once; returns the failures. */
export function checkAnswers({ sandbox, served, store, state, newServed, allRuns }) {
  const failures = [];
  const matched = new Set();
  const keys = new Set([...store.byKey.keys(), ...newServed.map((sent) => sent.key)]);
  for (const key of keys) {
    for (const [answer, source] of matchKey(store.byKey.get(key) ?? [], served.byKey.get(key) ?? [])) {
      const id = `${answer.key}|${answer.fetchedAt}`;
      if (source === undefined) {
        if (!state.said.has(id)) failures.push(`the store holds an answer for ${answer.key} fetched at ${iso(answer.fetchedAt)} that the sandbox never sent`);
        state.said.add(id);
        continue;
      }
      matched.add(source);
      state.sources.set(id, source);
      if (state.checked.has(id)) continue;
      state.checked.add(id);
      const wrong = wrongData(sandbox, answer, source);
      if (wrong) failures.push(wrong);
    }
  }
  for (const sent of newServed) {
    if (matched.has(sent) || runsAt(allRuns, sent.at).some(died)) continue;
    const by =
      runsAt(allRuns, sent.at)
        .map((run) => `${run.command} exit ${run.status}`)
        .join(', ') || 'no run';
    // What the store holds for the key, to tell a lost answer from one stamped out of its window.
    const held = (store.byKey.get(sent.key) ?? []).map((a) => `${a.where} ${iso(a.fetchedAt)}`).join(', ') || 'nothing';
    failures.push(
      `the sandbox answered ${sent.key} at ${iso(sent.at)} (${sent.found ? 'found' : 'not found'}, ${sent.credits} credits) and the store never kept it, though no run died (${by}; the store holds for it: ${held})`,
    );
  }
  return failures;
}

function wrongData(sandbox, answer, source) {
  if (answer.found !== source.found)
    return `the store says ${answer.key} was ${answer.found ? 'found' : 'not found'} at ${iso(answer.fetchedAt)}; the sandbox answered ${source.found ? 'found' : 'not found'}`;
  if (answer.same || !answer.found) return undefined;
  const truth = sandbox.truth('lookup_email', answer.key, source.epoch).data;
  return isDeepStrictEqual(answer.data, truth)
    ? undefined
    : `the store's answer for ${answer.key} fetched at ${iso(answer.fetchedAt)} is not what the sandbox sent at epoch ${source.epoch}`;
}

/** The epoch a stored answer was sent at (checkAnswers matched it). */
export function epochOf(state, answer) {
  return state.sources.get(`${answer.key}|${answer.fetchedAt}`)?.epoch;
}

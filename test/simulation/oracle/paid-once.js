// Nothing is paid twice: the sandbox charges a key again only when the answer the store held was
// older than --max-age, or was never stored because the run that paid for it died first. Two runs
// side by side may both pay for a key they looked up at the same moment, before the second's claim
// (docs/cli-contract.md, "Durability": counted apart, and never a failure).
import { durationMs, iso, runsAt } from './runs.js';

export function checkPaidOnce({ served, store, state, newServed, allRuns, figures }) {
  const failures = [];
  for (const charge of newServed.filter((answer) => answer.credits > 0)) {
    const list = served.byKey.get(charge.key);
    const prev = list[list.indexOf(charge) - 1];
    if (prev === undefined) continue;
    const stored = (store.byKey.get(charge.key) ?? []).find((a) => state.sources.get(`${a.key}|${a.fetchedAt}`) === prev);
    // Never stored: checkAnswers has judged that (a run died, or it is a failure of its own). Damaged (damage.js): looked up again.
    if (stored === undefined || state.damaged.has(`${stored.key}|${stored.fetchedAt}`)) continue;
    const going = runsAt(allRuns, charge.at);
    if (going.length === 0) {
      failures.push(`${charge.key} charged at ${iso(charge.at)} while no run was going`);
      continue;
    }
    // Two runs going (the other cron line beside the nightly one): the call may be the one whose --max-age is shorter.
    const maxAge = Math.min(...going.map((run) => durationMs(run.files.maxAge)));
    if (stored.fetchedAt < charge.at - maxAge) continue;
    if (going.length > 1) {
      figures.paidSideBySide += 1;
      continue;
    }
    figures.paidTwice += 1;
    failures.push(
      `${charge.key} paid again at ${iso(charge.at)} (${charge.credits} credits): its answer of ${iso(stored.fetchedAt)} was in the store, younger than --max-age`,
    );
  }
  return failures;
}

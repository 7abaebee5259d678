// Money, against the sandbox's own books (every charge, with when it reached the sandbox):
// - never past a budget: per UTC day and month, what the sandbox charged stays within the budget;
// - the store's ledger says what the sandbox charged: per day, the ledger's charged credits ≤ the
//   sandbox's ≤ charged + lapsed (the holds of runs that died, counted at their worst case) + what
//   dead runs still hold.
// The one allowance is a call held just before midnight that reaches the sandbox just after it
// (a few ms on this machine): its day is the one it was made in, which only the ledger knows. So
// charges that arrive in the first BOUNDARY_MS of a day may belong to the day before; the ledger's
// day totals must account for them (the flow m across each midnight, 0 ≤ m ≤ those charges).
import { isAlive } from './alive.js';
import { DAY_MS } from '../plan.js';

export const BOUNDARY_MS = 2_000;

const monthOf = (day) => new Date(day * DAY_MS).toISOString().slice(0, 7);
const dayName = (day) => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** Sandbox charges per UTC day: { credits, boundary } (credits that arrived in its first BOUNDARY_MS). */
function sandboxDays(charges) {
  const days = new Map();
  for (const { at, credits } of charges) {
    const day = Math.floor(at / DAY_MS);
    const entry = days.get(day) ?? { credits: 0, boundary: 0 };
    entry.credits += credits;
    if (at - day * DAY_MS < BOUNDARY_MS) entry.boundary += credits;
    days.set(day, entry);
  }
  return days;
}

export function checkSpend({ world, served, store, state, figures }) {
  const all = [];
  // A day or month found wrong is said once, on the night it was found (its id: the words before the colon).
  const failures = { push: (text) => all.push(text) };
  const sandbox = sandboxDays(served.charges);
  if (sandbox.size === 0) return all;
  const deadHolds = new Map();
  for (const hold of store.holds) if (!isAlive(hold.pid)) deadHolds.set(Math.floor(hold.made_at / DAY_MS), (deadHolds.get(Math.floor(hold.made_at / DAY_MS)) ?? 0) + hold.credits);
  const first = Math.min(...sandbox.keys(), ...store.ledgerDays.keys());
  const last = Math.max(...sandbox.keys(), ...store.ledgerDays.keys());
  const months = new Map();
  // m: the credits that reached the sandbox in day D's first moments but were made in day D - 1.
  let m = { lo: 0, hi: 0 };
  for (let day = first; day <= last; day += 1) {
    const s = sandbox.get(day) ?? { credits: 0, boundary: 0 };
    const ledger = store.ledgerDays.get(day) ?? { credits: 0, lapsed: 0 };
    const charged = ledger.credits - ledger.lapsed;
    const upper = ledger.credits + (deadHolds.get(day) ?? 0);
    // --recipes: the second recipe has no budget, so the day's charges are not the budget's to bound.
    if (!world.recipes && s.credits - s.boundary > world.dayBudget) failures.push(`day ${dayName(day)}: the sandbox charged ${s.credits} credits under --budget ${world.dayBudget}/day`);
    if (!world.recipes && ledger.credits > world.dayBudget) failures.push(`day ${dayName(day)}: the ledger counts ${ledger.credits} credits under --budget ${world.dayBudget}/day`);
    figures.maxDay = Math.max(figures.maxDay, s.credits);
    const month = months.get(monthOf(day)) ?? { credits: 0, boundary: 0, ledger: 0 };
    month.credits += s.credits;
    month.ledger += ledger.credits;
    if (new Date(day * DAY_MS).getUTCDate() === 1) month.boundary += s.boundary;
    months.set(monthOf(day), month);
    // The day's spend by the time its calls were made: s - m(D) + m(D + 1), within [charged, upper].
    const next = sandbox.get(day + 1)?.boundary ?? 0;
    const lo = Math.max(0, charged - s.credits + m.lo);
    const hi = Math.min(next, upper - s.credits + m.hi);
    if (lo > hi) {
      failures.push(`day ${dayName(day)}: store spend says ${charged} credits charged${ledger.lapsed ? ` + ${ledger.lapsed} lapsed` : ''}${deadHolds.get(day) ? ` + ${deadHolds.get(day)} held by dead runs` : ''}; the sandbox charged ${s.credits}`);
      m = { lo: 0, hi: next };
    } else m = { lo, hi };
  }
  for (const [name, month] of months) {
    if (world.recipes) continue;
    if (month.credits - month.boundary > world.monthBudget) failures.push(`month ${name}: the sandbox charged ${month.credits} credits under --budget ${world.monthBudget}/month`);
    if (month.ledger > world.monthBudget) failures.push(`month ${name}: the ledger counts ${month.ledger} credits under --budget ${world.monthBudget}/month`);
    figures.maxMonth = Math.max(figures.maxMonth, month.credits);
  }
  figures.boundaryCredits = [...sandbox.values()].reduce((sum, s) => sum + s.boundary, 0);
  const idOf = (text) => `${text.slice(0, text.indexOf(':'))}|${/under|store spend|ledger/.exec(text)?.[0]}`;
  const fresh = all.filter((text) => !state.said.has(idOf(text)));
  for (const text of fresh) state.said.add(idOf(text));
  return fresh;
}

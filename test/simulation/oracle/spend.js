// Money, against the sandbox's own books (every charge, with when it reached the sandbox):
// - never past a budget: per UTC day and month, what the sandbox charged stays within the budget;
// - the store's ledger says what the sandbox charged: per day, the ledger's charged credits ≤ the
//   sandbox's ≤ charged + lapsed (the holds of runs that died, counted at their worst case) + what
//   dead runs still hold.
// The one allowance is a call held just before midnight that reaches the sandbox just after it
// (a few ms on this machine): its day is the one it was made in, which only the ledger knows. So
// charges that arrive in the first BOUNDARY_MS of a day may belong to the day before; the ledger's
// day totals must account for them (the flow m across each midnight, 0 ≤ m ≤ those charges).
import { died } from './runs.js';
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

/** The sandbox's charges of a day, as a failure names them: when, which key, how much (the first few). */
function chargesOf(charges, day) {
  const those = charges.filter((c) => Math.floor(c.at / DAY_MS) === day);
  const words = those.slice(0, 4).map((c) => `${new Date(c.at).toISOString().slice(11, 23)} ${c.key ?? ''} ${c.credits}`.replace('  ', ' '));
  return `${words.join(', ')}${those.length > 4 ? `, and ${those.length - 4} more` : ''}`;
}

export function checkSpend({ world, served, store, state, allRuns, figures }) {
  const all = [];
  // A day or month found wrong is said once, on the night it was found: `what` names the check.
  const failures = { push: (text, what) => all.push({ text, id: `${text.slice(0, text.indexOf(':'))}|${what}` }) };
  const sandbox = sandboxDays(served.charges);
  if (sandbox.size === 0) return [];
  // Judged once the night's runs are over: every hold left is a dead run's (killed, or ended on a
  // full disk before it could release it, in this process too: the next run lapses it).
  const deadHolds = new Map();
  for (const hold of store.holds) deadHolds.set(Math.floor(hold.made_at / DAY_MS), (deadHolds.get(Math.floor(hold.made_at / DAY_MS)) ?? 0) + hold.credits);
  const first = Math.min(...sandbox.keys(), ...store.ledgerDays.keys());
  const last = Math.max(...sandbox.keys(), ...store.ledgerDays.keys());
  const months = new Map();
  // Lapsed credits (a dead run's holds at their worst case) only on a day a run died.
  const deathDays = new Set(allRuns.filter(died).flatMap((run) => [Math.floor(run.startedAt / DAY_MS), Math.floor(run.endedAt / DAY_MS)]));
  // m: the credits that reached the sandbox in day D's first moments but were made in day D - 1.
  let m = { lo: 0, hi: 0 };
  for (let day = first; day <= last; day += 1) {
    const s = sandbox.get(day) ?? { credits: 0, boundary: 0 };
    const ledger = store.ledgerDays.get(day) ?? { credits: 0, lapsed: 0 };
    const charged = ledger.credits - ledger.lapsed;
    const upper = ledger.credits + (deadHolds.get(day) ?? 0);
    if (ledger.lapsed > 0 && !deathDays.has(day))
      failures.push(`day ${dayName(day)}: the ledger counts ${ledger.lapsed} credits lapsed, though no run died that day`, 'lapsed');
    // --recipes: the second recipe has no budget, so the day's charges are not the budget's to bound.
    if (!world.recipes && s.credits - s.boundary > world.dayBudget)
      failures.push(`day ${dayName(day)}: the sandbox charged ${s.credits} credits under --budget ${world.dayBudget}/day`, 'budget');
    if (!world.recipes && ledger.credits > world.dayBudget)
      failures.push(`day ${dayName(day)}: the ledger counts ${ledger.credits} credits under --budget ${world.dayBudget}/day`, 'ledger budget');
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
      failures.push(
        `day ${dayName(day)}: store spend says ${charged} credits charged${ledger.lapsed ? ` + ${ledger.lapsed} lapsed` : ''}${deadHolds.get(day) ? ` + ${deadHolds.get(day)} held by dead runs` : ''}; the sandbox charged ${s.credits} (${chargesOf(served.charges, day)})`,
        'equal',
      );
      m = { lo: 0, hi: next };
    } else m = { lo, hi };
  }
  for (const [name, month] of months) {
    if (world.recipes) continue;
    if (month.credits - month.boundary > world.monthBudget)
      failures.push(`month ${name}: the sandbox charged ${month.credits} credits under --budget ${world.monthBudget}/month`, 'budget');
    if (month.ledger > world.monthBudget)
      failures.push(`month ${name}: the ledger counts ${month.ledger} credits under --budget ${world.monthBudget}/month`, 'ledger budget');
    figures.maxMonth = Math.max(figures.maxMonth, month.credits);
  }
  figures.boundaryCredits = [...sandbox.values()].reduce((sum, s) => sum + s.boundary, 0);
  const fresh = all.filter(({ id }) => !state.said.has(id));
  for (const { id } of fresh) state.said.add(id);
  return fresh.map(({ text }) => text);
}

/**
 * `lead-enrich store spend --json` says what the ledger holds: each day and month it lists has the
 * credits of the ledger's totals (which checkSpend holds to the sandbox's books).
 */
export function checkSpendCommand({ store, storeSpend, state }) {
  // A store file that a full disk left empty (no tables yet): store spend refuses to read it, in one line.
  if (!storeSpend || !store.ready) return [];
  if (storeSpend.status !== 0 || !storeSpend.json) return [`store spend --json exited ${storeSpend.status}: ${storeSpend.stderr.join(' ')}`];
  const listed = new Map();
  // Per service (a listing that shows each service apart is summed per day): one sandbox here.
  for (const part of storeSpend.json.services ?? [storeSpend.json])
    for (const row of part.days ?? []) listed.set(row.day ?? row.period, (listed.get(row.day ?? row.period) ?? 0) + row.credits);
  const failures = [];
  for (const [day, credits] of listed) {
    const ledger = store.ledgerDays.get(Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS))?.credits ?? 0;
    const text = `store spend lists ${credits} credits on ${day}; the ledger holds ${ledger}`;
    if (credits !== ledger && !state.said.has(text)) failures.push(text), state.said.add(text);
  }
  return failures;
}

// What the seed decides: the world (start date, contacts, budgets, drift) and, for each night, its
// conditions. Pure: no clock, no file, no run; the trace is this plan, and its hash is what "the same
// seed gives the same trace" compares. A night's draws come from (seed, night) alone.
import { createHash } from 'node:crypto';
import { random } from './random.js';

export const DAY_MS = 86_400_000;

/** The fault kinds a flaky night mixes: each may pass on a retry (no `hang`: a real wait per request). */
const FLAKY_KINDS = ['error500', 'error503', 'reset', 'truncated', 'failed200'];

/** The world a seed makes; `options` (--start, --rows) may pin some of it. */
export function worldOf(seed, options = {}) {
  const r = random(seed, 'world');
  // A start from June 2027 to mid-February 2028: a year of nights holds the leap day 2028-02-29.
  const drawnStart = Date.UTC(2027, 5, 1) + r.int(0, 259) * DAY_MS;
  const start = options.start ?? drawnStart;
  const rows = options.rows ?? r.int(120, 200);
  return {
    seed,
    recipes: options.recipes === true,
    start,
    rows,
    drift: Math.round(r.between(0.01, 0.025) * 1000) / 1000,
    // Tight enough to bind on many nights: the first nights' backlog, the days when a month's
    // answers all grow stale at once, the last days of a month.
    dayBudget: Math.round(rows * r.between(0.8, 2)),
    monthBudget: Math.round(rows * r.between(4, 7)),
    reserve: 200,
    balance: 8000,
    // The nightly command's --max-age; the other cron line keeps the default (30d).
    maxAge: options.maxAge ?? r.pick(['7d', '14d', '30d']),
    patience: '3s',
  };
}

/** The last UTC day of its month? */
function lastDayOfMonth(at) {
  return new Date(at + DAY_MS).getUTCDate() === 1;
}

/** Night `n` (0-based) of a world: its date and the conditions drawn for it. */
export function nightOf(world, n) {
  const r = random(world.seed, 'night', n);
  const date = world.start + n * DAY_MS;
  // The README's two recipes as written, night after night: no fault, only people changing jobs.
  if (world.recipes) return { n, date, second: true, contacts: { add: r.int(0, 3), remove: r.int(0, 2), edit: r.chance(0.5), malformed: false } };
  const night = { n, date, second: r.chance(0.3) };
  // The main command starts before midnight UTC and runs across it: by this share (percent) of the
  // shortest run so far (night.js), so that it crosses on a fast machine as on a slow one. Most
  // month ends have one: a year must meet five (at 0.6, one seed in eighteen met four or fewer).
  if (r.chance(lastDayOfMonth(date) ? 0.85 : 0.06)) night.midnightPercent = r.int(10, 60);
  const kill = r.chance(0.1);
  // Killed after that many answers, or that many ms after it started, whichever comes first: most
  // nights look up only a few keys once the first nights' backlog is bought.
  if (kill) night.kill = { target: night.second && r.chance(0.3) ? 'second' : 'main', afterAnswers: r.int(0, 6), afterMs: r.int(20, 500) };
  else night.secondOverlap = night.second && r.chance(0.25);
  // Mid-run: the lookups fail from this many ms after the command starts, its account reads
  // answered. Most nights' runs send their few lookups within a tenth of a second: a later outage
  // would meet none (at 10-150 ms, a year met six). Long (past --patience) for six in ten: a run with
  // nothing left to look up never meets the patience's end, and at four in ten seed 2027's year
  // stopped for it on only 4 of its 13 long outages.
  if (r.chance(0.1)) night.outage = { at: r.chance(0.5) ? 'start' : 'mid', long: r.chance(0.6), kind: r.pick(['error503', 'reset']), afterMs: r.int(0, 40) };
  if (r.chance(0.15)) night.faults = flakyRates(r);
  if (r.chance(0.08)) night.dailyLimit = r.int(0, 15);
  if (r.chance(0.05)) night.lowCredits = r.int(0, 30);
  if (!kill && r.chance(0.06)) night.overlap = true;
  if (night.overlap) night.latency = `${r.int(200, 250)}-${r.int(250, 300)}`;
  else if (kill) night.latency = `${r.int(10, 40)}-${r.int(60, 150)}`;
  else if (r.chance(0.08)) night.latency = `${r.int(100, 200)}-${r.int(250, 450)}`;
  if (!kill && r.chance(0.05)) {
    const disk = r.pick(['store', 'outputs']);
    night.diskFull = { disk, roomKiB: disk === 'store' ? r.int(0, 12) : r.int(0, 48) };
  }
  night.contacts = { add: r.int(0, 3), remove: r.int(0, 2), edit: r.chance(0.5), malformed: r.chance(0.04) };
  if (r.chance(0.03)) night.damage = true;
  // The daily limit meets a run only on a night that sends requests, and a month budget that binds
  // sends none for the rest of its month: a few more early in a month, when a budget has room, so
  // that every seed's year meets it at least five times. Drawn last, so the draws above (and every
  // night a seed drew before this line) stay as they were.
  if (night.dailyLimit === undefined && new Date(date).getUTCDate() <= 7 && r.chance(0.1)) night.dailyLimit = r.int(0, 15);
  // The rarest conditions drawn once more, last, for the same reason: at the rates above a year
  // draws a full disk of each kind, or a damaged answer, fewer than five times for one seed in
  // five (300 seeds' plans), and a fresh seed in CI must not fail for want of them.
  if (!kill && !night.diskFull && r.chance(0.04)) {
    const disk = r.pick(['store', 'outputs']);
    night.diskFull = { disk, roomKiB: disk === 'store' ? r.int(0, 12) : r.int(0, 48) };
  }
  if (!night.damage && r.chance(0.03)) night.damage = true;
  // A balance just above the reserve is met only by a run that looks something up, which a month
  // whose budget is spent does not: a few more early in a month, below the worst case of one call
  // (the first lookup meets it). A year of seed 1584363787 met three of nine before.
  if (night.lowCredits === undefined && new Date(date).getUTCDate() <= 10 && r.chance(0.08)) night.lowCredits = r.int(0, 7);
  return night;
}

function flakyRates(r) {
  const total = r.between(0.02, 0.07);
  const weights = FLAKY_KINDS.map(() => r.float());
  const sum = weights.reduce((a, b) => a + b, 0);
  return Object.fromEntries(FLAKY_KINDS.map((kind, i) => [kind, Math.round(((total * weights[i]) / sum) * 10_000) / 10_000]));
}

/** The whole plan of `nights` nights, and its hash: the trace two runs of one seed must share. */
export function planOf(seed, nights, options = {}) {
  const world = worldOf(seed, options);
  const plan = { world, nights: Array.from({ length: nights }, (_, n) => nightOf(world, n)) };
  return { ...plan, hash: createHash('sha256').update(JSON.stringify(plan)).digest('hex').slice(0, 16) };
}

/** How many nights of a plan drew each condition (what the seed asked for; the table says what took effect). */
export function drawnOf(nights) {
  const count = (test) => nights.filter(test).length;
  return {
    'second line': count((n) => n.second && !n.secondOverlap),
    'side by side': count((n) => n.secondOverlap),
    'down at start': count((n) => n.outage?.at === 'start'),
    'down mid-run': count((n) => n.outage?.at === 'mid'),
    'past patience': count((n) => n.outage?.long),
    flaky: count((n) => n.faults),
    'daily limit': count((n) => n.dailyLimit !== undefined),
    reserve: count((n) => n.lowCredits !== undefined),
    slow: count((n) => n.latency && !n.overlap && !n.kill),
    overlap: count((n) => n.overlap),
    killed: count((n) => n.kill),
    'store full': count((n) => n.diskFull?.disk === 'store'),
    'outputs full': count((n) => n.diskFull?.disk === 'outputs'),
    midnight: count((n) => n.midnightPercent),
    malformed: count((n) => n.contacts?.malformed),
    damaged: count((n) => n.damage),
  };
}

#!/usr/bin/env node
// The seeded simulation of nights (docs/development.md, "The simulation of nights"): the README's
// nightly command run night after night on one store against a drifting sandbox, each night's
// conditions drawn from the seed, the oracle after every night.
//
//   npm run simulate -- --nights 365 --seed 42      a year (the built CLI: npm run simulate builds first)
//   node test/simulation/main.js --nights 30 --seed 42 --start 2028-02-10
//   node test/simulation/main.js --seed 42 --plan   the trace's hash only: no night is run
//
// Exit status: 0 when every night passed the oracle, 1 when one did not (the first failing night
// is printed with the command that replays it from scratch), 2 on a usage mistake.
import { performance } from 'node:perf_hooks';
import { installClock } from './clock.js';
import { Contacts } from './contacts.js';
import { countersOf, conditionsOf } from './conditions.js';
import { runNight } from './night.js';
import { Oracle } from './oracle/oracle.js';
import { optionsOf, replayCommand } from './options.js';
import { drawnOf, planOf } from './plan.js';
import { printFigures, printNight, writeSummary } from './report.js';
import { inProcessLines, nightBegins } from './in-process-requests.js';
import { moneyLines } from './debug-money.js';
import { killChildren, runInProcess } from './runs.js';
import { openWorld } from './world.js';

const options = optionsOf(process.argv.slice(2));
const plan = planOf(options.seed, options.nights, options);
const { world } = plan;
const out = (line = '') => process.stdout.write(`${line}\n`);
out(`simulation: seed ${world.seed}, ${options.nights} nights from ${new Date(world.start).toISOString().slice(0, 10)}, trace ${plan.hash}`);
if (options.planOnly) process.exit(0);

installClock();
const started = performance.now();
const ctx = await openWorld(world, { keep: options.keep });
const stop = () => {
  killChildren();
  ctx.close().finally(() => process.exit(130));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
ctx.contacts = new Contacts(world);
// The runs in this process read the same environment as the children get.
Object.assign(process.env, ctx.env);
out(
  `  ${world.rows} contacts, drift ${world.drift}, --budget ${world.dayBudget}/day --budget ${world.monthBudget}/month --min-credits ${world.reserve} --max-age ${world.maxAge}; folder ${ctx.root}${ctx.canFillDisks ? '' : ' (no tmpfs: no full disk)'}`,
);

const oracle = new Oracle(world, ctx.sandbox, ctx.files.store);
const table = new Map();
let firstFailure;
let ran = 0;
try {
  for (const night of plan.nights) {
    ran += 1;
    const before = countersOf(ctx.sandbox);
    nightBegins();
    const { runs, damaged } = await runNight(world, ctx, night);
    const hasMalformed = ctx.contacts.hasMalformed;
    const seen = conditionsOf(night, runs, before, countersOf(ctx.sandbox), hasMalformed, damaged);
    for (const name of seen) table.set(name, (table.get(name) ?? 0) + 1);
    const judged = performance.now();
    const storeSpend = await runInProcess(['store', 'spend', '--store', ctx.files.store, '--json']);
    const failures = oracle.judge(night, runs, { hasMalformed, storeSpend, damaged });
    oracle.figures.oracleSeconds += (performance.now() - judged) / 1000;
    if (!options.quiet || failures.length > 0) printNight(out, night, runs, seen, oracle.figures, failures);
    if (failures.length > 0) {
      firstFailure ??= { night: night.n + 1, failures };
      for (const line of inProcessLines()) out(`    ${line}`);
      if (process.env.SIM_DEBUG) for (const line of moneyLines(ctx.sandbox, ctx.files.store)) out(`    ${line}`);
      out(`  replay: ${replayCommand(options, night.n + 1)}`);
      if (!options.keepGoing) break;
    }
  }
} finally {
  await ctx.close();
}
const seconds = (performance.now() - started) / 1000;
const shortOfFive = printFigures(out, { world, options, plan, oracle, table, seconds, ran, canFillDisks: ctx.canFillDisks });
if (options.summary)
  writeSummary(options.summary, {
    seed: world.seed,
    nights: options.nights,
    trace: plan.hash,
    seconds,
    figures: oracle.figures,
    table: Object.fromEntries(table),
    drawn: drawnOf(plan.nights),
    firstFailure,
    shortOfFive,
  });
process.exitCode = firstFailure || shortOfFive.length > 0 ? 1 : 0;

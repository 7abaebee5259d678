// One night: the sandbox's day (a new drift epoch, the night's faults, outage, latency, daily limit
// and balance), the contacts file of the night, the disks, then the night's commands at their
// times on the simulated clock: in this process, or as children (a real SIGKILL at the drawn
// point, a second run beside the first). What each run did is returned for the oracle.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DAY_MS } from './plan.js';
import { commandsOf, filesOf } from './commands.js';
import { realNow, setSimulatedNow } from './clock.js';
import { runChild, runInProcess } from './runs.js';
import { damageOne } from './damage.js';
import { inFlightTo } from './sandbox-sockets.js';

const SECOND_AT = 2.5 * 3_600_000;
const MAIN_AT = 3.25 * 3_600_000;
/** An outage of a simulated night: seconds of real time, either side of --patience (3 s). */
const SHORT_OUTAGE_MS = 900;
const LONG_OUTAGE_MS = 5_500;
/** After a kill, the sandbox is given at least this long to read a killed run's last requests... */
const KILLED_DRAIN_MS = 100;
/** ...and at most this long for the kernel to deliver them (sandbox-sockets.js), or this long where it cannot be asked. */
const KILLED_DRAIN_BOUND_MS = 5_000;
/** The other cron line started beside the nightly one starts this long before it. */
const SIDE_BY_SIDE_MS = 100;

const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sets the sandbox and the disks for the night; returns what puts them back. */
function conditions(world, ctx, night) {
  const { sandbox } = ctx;
  if (night.n > 0) sandbox.nextDay();
  sandbox.setCredits(night.lowCredits === undefined ? world.balance : world.reserve + night.lowCredits);
  sandbox.setFaults(night.faults ?? {});
  sandbox.setLatency(night.latency ?? 0);
  sandbox.setDailyLimit(night.dailyLimit);
  return () => {
    sandbox.setFaults({});
    sandbox.setOutage(undefined);
    sandbox.setLatency(0);
    sandbox.setDailyLimit(undefined);
    for (const disk of Object.values(ctx.disks)) disk.roomy();
  };
}

/** Right before the main command: the full disk, which is the main command's (a remount takes a few ms: before the clock is set). */
function fillDisk(ctx, night) {
  const { diskFull } = night;
  if (diskFull && ctx.canFillDisks) ctx.disks[diskFull.disk].fill(diskFull.roomKiB * 1024);
}

/**
 * When the main command starts: at 03:15, or before midnight by a share of the shortest run in
 * this process so far (a run that is all answered from the store takes some 15 ms on a fast
 * machine, 50 on a loaded one), so that it runs across midnight wherever it runs.
 */
function mainStart(ctx, night) {
  if (!night.midnightPercent) return night.date + MAIN_AT;
  const beforeMs = Math.max(1, Math.round((ctx.shortestRunMs * night.midnightPercent) / 100));
  return night.date + DAY_MS - beforeMs;
}

/** The shortest run in this process that went to its end (a refusal at its start is no measure). */
function noteDurations(ctx, runs) {
  for (const run of runs) if (run.how === 'in-process' && run.status !== 1) ctx.shortestRunMs = Math.min(ctx.shortestRunMs, run.endedAt - run.startedAt);
}

/** Right before the main command, once the clock is set: the outage, which is the main command's. */
function startOutage(ctx, night) {
  const { outage } = night;
  if (outage) {
    const forMs = outage.long ? LONG_OUTAGE_MS : SHORT_OUTAGE_MS;
    ctx.sandbox.setOutage(
      outage.at === 'start' ? { afterMs: 0, forMs, kind: outage.kind, scope: 'all' } : { afterMs: outage.afterMs, forMs, kind: outage.kind },
    );
  }
}

/** The lock file a run takes beside its output (write/output-lock.ts). */
const lockOf = (output) => path.join(path.dirname(output), `.${path.basename(output)}.lock`);

/** Last night's outputs go, so that what a run leaves is its own (a killed run's outputs never appear). */
function clearOutputs(ctx) {
  const dir = ctx.disks.outputs.dir;
  for (const name of fs.readdirSync(dir)) fs.rmSync(path.join(dir, name), { force: true, recursive: true });
}

/**
 * A file a run wrote, read as soon as it ends (the same command run twice in a night writes its
 * files twice: its output, its sidecar, its --changes file, which cron would mail twice); none when
 * the file is older than the run (the run wrote none: killed, refused, a fatal error).
 */
function writtenBy(file, realStart) {
  if (!file || !fs.existsSync(file) || fs.statSync(file).mtimeMs < realStart) return undefined;
  return fs.readFileSync(file, 'utf8');
}

/** A command's run: in this process, or a child killed after `afterAnswers` more answers. */
function run(ctx, args, { child = false, kill } = {}) {
  const files = filesOf(args);
  const realStart = realNow() - 1;
  const done = (result) => ({
    ...result,
    files,
    outputText: writtenBy(files.output, realStart),
    sidecarText: writtenBy(files.sidecar, realStart),
    changesText: writtenBy(files.changes, realStart),
  });
  if (!child && !kill) return runInProcess(args).then(done);
  const base = ctx.sandbox.answers.length;
  // The clock of `afterMs` starts when the run has taken its output's lock: node has started, the run is under way.
  const lock = lockOf(files.output);
  let lockedAt;
  const killWhen = kill
    ? () => {
        if (lockedAt === undefined && fs.existsSync(lock)) lockedAt = performance.now();
        return ctx.sandbox.answers.length >= base + kill.afterAnswers || (lockedAt !== undefined && performance.now() - lockedAt >= kill.afterMs);
      }
    : undefined;
  return runChild(args, ctx.env, { killWhen }).then(done);
}

/**
 * Lets the sandbox read what the killed runs sent before they died; they were going until then (the
 * oracle dates their requests by when the sandbox took them in). The kernel may still be delivering
 * a dead run's last requests well after its death (sandbox-sockets.js): the wait lasts until nothing
 * is on its way to the sandbox, then one more turn of this process's loop, in which it reads them.
 */
async function drainKilled(ctx, runs) {
  if (!runs.some((r) => r.killed)) return;
  const port = Number(new URL(ctx.sandbox.baseUrl).port);
  const start = performance.now();
  await wait(KILLED_DRAIN_MS);
  let pending = inFlightTo(port);
  while (pending !== false && performance.now() - start < KILLED_DRAIN_BOUND_MS) {
    await wait(10);
    pending = inFlightTo(port);
  }
  await wait(KILLED_DRAIN_MS);
  for (const r of runs) if (r.killed) r.endedAt = Date.now();
}

/**
 * The same command again while the first (a child, slow answers) holds its output: the next
 * night's cron line, had this one overrun. Started once the first's output lock is there.
 */
async function again(ctx, args) {
  const lock = lockOf(filesOf(args).output);
  for (let waited = 0; waited < 10_000 && !fs.existsSync(lock); waited += 5) await wait(5);
  const lockHeld = fs.existsSync(lock);
  const result = await run(ctx, args);
  return { command: 'main again', lockHeld, ...result };
}

export async function runNight(world, ctx, night) {
  clearOutputs(ctx);
  const restore = conditions(world, ctx, night);
  ctx.contacts.edit(night);
  ctx.contacts.write(ctx.files.contacts);
  const damaged = night.damage ? damageOne(ctx.files.store, world.seed, night, ctx.contacts.emails) : undefined;
  const { main, second } = commandsOf(world, ctx.files);
  const killOf = (target) => (night.kill?.target === target ? night.kill : undefined);
  const runs = [];
  try {
    if (night.second && !night.secondOverlap) {
      setSimulatedNow(night.date + SECOND_AT);
      runs.push({ command: 'second', ...(await run(ctx, second, { kill: killOf('second') })) });
      await drainKilled(ctx, runs);
    }
    fillDisk(ctx, night);
    // A run beside it starts first, SIDE_BY_SIDE_MS before: the clock is set for the main command's start.
    setSimulatedNow(Math.max(Date.now() + 1, mainStart(ctx, night) - (night.secondOverlap ? SIDE_BY_SIDE_MS : 0)));
    startOutage(ctx, night);
    const together = [];
    if (night.secondOverlap) {
      together.push(run(ctx, second, { child: true }).then((result) => ({ command: 'second', ...result })));
      await wait(SIDE_BY_SIDE_MS);
    }
    together.push(run(ctx, main, { kill: killOf('main'), child: night.overlap }).then((result) => ({ command: 'main', ...result })));
    if (night.overlap) together.push(again(ctx, main));
    const mains = await Promise.all(together);
    runs.push(...mains);
    // What a killed run sent before it died may still wait in the sandbox's sockets: this process
    // reads it only when its event loop next waits for I/O, and a killed child can leave dozens
    // of connections not yet accepted (seed 42, night 295: 23 at the kill, 9 still after the old
    // fixed 100 ms). Untaken, the sandbox would take those requests in (and charge them) during the
    // next night, on its clock: that run would pay for the same keys again (seed 1584363787, night
    // 230), or the charges would land on a day whose ledger never made them (seed 42, night 296).
    await drainKilled(ctx, mains);
  } finally {
    restore();
  }
  noteDurations(ctx, runs);
  // The changes file as the recipe's `tail -n +2 changes.csv` mails it (--recipes: only after 0 or 5).
  for (const r of runs) if (world.recipes && r.status !== 0 && r.status !== 5) r.changesText = undefined;
  return { runs, damaged };
}

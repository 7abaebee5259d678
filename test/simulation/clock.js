// The simulated clock. A night of the simulation runs at its own date (2028-02-29 03:15 UTC, say)
// while real seconds still pass inside it: `Date` (and `Date.now()`) read the real clock plus an
// offset, which the simulation moves between nights only, never while a run is in flight (a call
// never lasts a day: a jump would make its holds and claims lapse, as no real night does).
// Everything in lead-enrich that reads the time reads `Date` (the store's fetched_at, --max-age,
// the ledger, the budgets' days and months, leases), so shifting it shifts them all, and nothing
// in the product needs a test hook. Timers and performance.now() are left alone: a wait is real.
//
// In the simulation's own process, installClock() replaces the global Date once; setSimulatedNow()
// moves it. A run started as a child process (a night that kills it with SIGKILL) loads this file
// with `node --import`, and SIMULATED_CLOCK_OFFSET_MS (the parent's offset) installs the same
// clock there before lead-enrich starts, so parent, child and the sandbox agree to the millisecond.

const RealDate = globalThis.Date;
let offsetMs = 0;
let installed = false;

/** A Date that reads the real clock plus the offset when made without arguments. */
function SimulatedDate(...args) {
  if (!new.target) return new RealDate(RealDate.now() + offsetMs).toString();
  return Reflect.construct(RealDate, args.length === 0 ? [RealDate.now() + offsetMs] : args, new.target);
}
SimulatedDate.prototype = RealDate.prototype;
Object.setPrototypeOf(SimulatedDate, RealDate);
SimulatedDate.now = () => RealDate.now() + offsetMs;

/** Replaces the global Date (once). */
export function installClock() {
  if (installed) return;
  globalThis.Date = SimulatedDate;
  installed = true;
}

/** From now on the clock reads `ms` (epoch ms), then goes on in real time. */
export function setSimulatedNow(ms) {
  offsetMs = ms - RealDate.now();
}

/** The offset a child process is given (SIMULATED_CLOCK_OFFSET_MS). */
export function clockOffset() {
  return offsetMs;
}

/** The real time (epoch ms), whatever the simulated clock says. */
export const realNow = () => RealDate.now();

const fromEnvironment = process.env.SIMULATED_CLOCK_OFFSET_MS;
if (fromEnvironment !== undefined) {
  offsetMs = Number(fromEnvironment);
  installClock();
}

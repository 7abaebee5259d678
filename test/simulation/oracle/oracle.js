// The oracle, after every night: each check reads the sandbox's books, the store, the night's runs
// and their files, and says what is wrong, in words that name the key, the day or the row.
import { checkAnswers } from './answers.js';
import { ServedIndex, readStore, storeCache } from './books.js';
import { checkChanges } from './changes.js';
import { checkExits } from './exits.js';
import { checkPaidOnce } from './paid-once.js';
import { checkRows } from './rows.js';
import { checkSpend, checkSpendCommand } from './spend.js';
import { checkStoreSize, foldedBefore } from './store-size.js';
import { finished } from './runs.js';

const CHECKS = [
  ['answers', checkAnswers],
  ['rows', checkRows],
  ['spend', checkSpend],
  ['store spend', checkSpendCommand],
  ['paid once', checkPaidOnce],
  ['changes', checkChanges],
  ['exit status', checkExits],
  ['store size', checkStoreSize],
];

export class Oracle {
  served = new ServedIndex();
  state = { sources: new Map(), checked: new Set(), damaged: new Set(), unknownBefore: new Set(), reported: new Map(), lost: new Set(), said: new Set() };
  allRuns = [];
  /** What readStore read on earlier nights. */
  cache = storeCache();
  figures = {
    maxDay: 0,
    maxMonth: 0,
    boundaryCredits: 0,
    paidTwice: 0,
    paidSideBySide: 0,
    storeBytes: 0,
    maxStoreBytes: 0,
    ledgerRows: 0,
    changes: { expected: 0, reported: 0, lost: 0, duplicated: 0, listedAgainAfterKill: 0, pending: 0 },
    lowestBalance: Infinity,
    oracleSeconds: 0,
  };

  constructor(world, sandbox, storeFile) {
    this.world = world;
    this.sandbox = sandbox;
    this.storeFile = storeFile;
  }

  /** The night's failures, each `[check, words]`. */
  judge(night, runs, { hasMalformed, storeSpend, damaged }) {
    if (damaged) this.state.damaged.add(`${damaged.key}|${damaged.fetchedAt}`);
    for (const run of runs) run.night = night.n + 1;
    this.allRuns.push(...runs);
    const newServed = this.served.update(this.sandbox);
    // The ledger is folded by each run as it opens it: by the last that finished, if any did tonight.
    const folded = runs.filter(finished).map((run) => run.startedAt);
    const store = readStore(this.storeFile, this.cache, folded.length > 0 ? foldedBefore(Math.max(...folded)) : 0);
    const context = {
      world: this.world,
      night,
      runs,
      hasMalformed,
      storeSpend,
      allRuns: this.allRuns,
      sandbox: this.sandbox,
      served: this.served,
      store,
      state: this.state,
      newServed,
      figures: this.figures,
    };
    const failures = [];
    for (const [name, check] of CHECKS) for (const words of check(context)) failures.push([name, words]);
    failures.push(...this.#reserve(runs).map((words) => ['credit reserve', words]));
    return failures;
  }

  /** The balance never went below --min-credits (one run at a time: each run's reserve is its own). */
  #reserve(runs) {
    const balance = this.sandbox.credits;
    this.figures.lowestBalance = Math.min(this.figures.lowestBalance, balance);
    const alone = runs.every((a) => runs.every((b) => a === b || a.endedAt < b.startedAt || b.endedAt < a.startedAt));
    return alone && balance < this.world.reserve ? [`the balance ended at ${balance}, under --min-credits ${this.world.reserve}`] : [];
  }
}

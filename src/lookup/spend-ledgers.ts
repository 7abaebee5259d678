// One ledger, two backends (docs/cli-contract.md, "Spending over days and months"): runs sharing a
// store hold and record in its file (store/store-spend.ts); workers with --redis in Redis
// (cluster/shared-spend.ts), across machines, where the store still keeps this run's own record.
// budget.ts is the one algorithm over either.
import type { Coordinator } from '../cluster/coordinator.js';
import type { ResultStore } from '../store/result-store.js';
import type { Settle, SpendHolds } from '../store/store-spend.js';
import type { SpendLedger } from './budget.js';

/** The store's ledger: holds taken (in the file) only once a day or month budget asks for one. */
export function storeLedger(store: ResultStore, owner: string, leaseMs: number): SpendLedger & { close(): void } {
  const { ledger, holds } = store.spend();
  let mine: SpendHolds | undefined;
  return {
    reserve: (cost, limits, at) => (mine ??= holds(owner, leaseMs)).reserve(cost, limits, at),
    settle: (seq, charge) => settleIn(store, { hold: seq === undefined ? undefined : { owner, seq }, charge }),
    standing: (period) => ledger.standing(period),
    // Released before the store is closed (resources go in the reverse order they came).
    close: () => mine?.releaseAll(),
  };
}

/** Redis's ledger, shared by every worker on it; each charge is recorded in this run's store too. */
export function redisLedger(coordinator: Coordinator, store: ResultStore): SpendLedger {
  const local = store.spend();
  return {
    reserve: (cost, limits, at) => coordinator.spend.reserve(cost, limits, at),
    settle: async (seq, charge) => {
      if (charge) settleIn(store, { hold: undefined, charge });
      // If Redis is gone the coordinator has already told the run; the answer itself must not be lost.
      await coordinator.spend.settle(seq, charge).catch(() => {});
    },
    standing: (period) => (coordinator.lost ? local.ledger.standing(period) : coordinator.spend.standing(period)),
  };
}

function settleIn(store: ResultStore, settle: Settle): void {
  try {
    store.settle(settle);
  } catch {
    // A call that outlived its run (a second Ctrl-C does not wait for it) finds the store closed.
  }
}

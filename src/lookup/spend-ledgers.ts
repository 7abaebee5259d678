// One ledger, two backends (docs/cli-contract.md, "Spending over days and months"): runs sharing a
// store hold and record in its file (store/store-spend.ts); workers with --redis in Redis
// (cluster/shared-spend.ts), across machines, where the store still keeps this run's own record.
// budget.ts is the one algorithm over either. Each is of one service: the one the run is pointed at.
import type { Coordinator } from '../cluster/coordinator.js';
import type { ResultStore } from '../store/result-store.js';
import type { Settle, SpendHolds } from '../store/store-spend.js';
import type { SpendLedger } from './budget.js';

/** The store's ledger of `service`: this run's holds in the file, made at its first call. */
export function storeLedger(store: ResultStore, owner: string, leaseMs: number, service: string): SpendLedger & { close(): void } {
  const { ledger, holds } = store.spend();
  let mine: SpendHolds | undefined;
  return {
    reserve: (op, cost, limits, at) => (mine ??= holds(owner, service, leaseMs)).reserve(op, cost, limits, at),
    settle: (hold, charge) => settleIn(store, { hold: hold && { owner, service, ...hold }, charge }),
    standing: (period) => ledger.standing(period, service),
    mostCharged: () => ledger.mostCharged(service),
    // Before the store is closed (resources go in the reverse order they came): the settled calls
    // committed first, so that only a call never settled is left held, and counted.
    close: () => {
      if (!mine) return;
      try {
        store.flush();
        mine.close();
      } catch {
        // A store that cannot be written now: the next run finds this process gone and counts its holds.
      }
    },
  };
}

/** Redis's ledger, shared by every worker on it; each charge is recorded in this run's store too. */
export function redisLedger(coordinator: Coordinator, store: ResultStore, service: string): SpendLedger {
  const local = store.spend();
  return {
    reserve: (op, cost, limits, at) => coordinator.spend.reserve(op, cost, limits, at),
    settle: async (hold, charge) => {
      if (charge) settleIn(store, { hold: undefined, charge });
      // If Redis is gone the coordinator has already told the run; the answer itself must not be lost.
      await coordinator.spend.settle(hold?.seq, charge).catch(() => {});
    },
    standing: (period) => (coordinator.lost ? local.ledger.standing(period, service) : coordinator.spend.standing(period)),
    mostCharged: async () => {
      const most = local.ledger.mostCharged(service);
      for (const [op, credits] of await coordinator.spend.mostCharged()) if (credits > (most.get(op) ?? 0)) most.set(op, credits);
      return most;
    },
  };
}

function settleIn(store: ResultStore, settle: Settle): void {
  try {
    store.settle(settle);
  } catch {
    // A call that outlived its run (a second Ctrl-C does not wait for it) finds the store closed.
  }
}

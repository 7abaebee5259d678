// The store stays small: its size after each night is kept (and printed at the end), and the
// ledger keeps per-call rows only for the months a budget can still read (docs/cli-contract.md, "A
// bounded ledger"): none older than the start of the month before the current one.
import { DAY_MS } from '../plan.js';

export const LEDGER_MONTHS_KEPT = 2;

export function checkStoreSize({ store, figures, state }) {
  figures.storeBytes = store.bytes;
  figures.maxStoreBytes = Math.max(figures.maxStoreBytes, store.bytes);
  figures.ledgerRows = store.ledgerRows;
  const now = new Date(Date.now());
  const keptFrom = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (LEDGER_MONTHS_KEPT - 1), 1);
  if (store.ledgerOldest !== undefined && store.ledgerOldest < keptFrom && !state.said.has('ledger')) {
    state.said.add('ledger');
    const days = Math.round((keptFrom - store.ledgerOldest) / DAY_MS);
    return [`the ledger keeps ${store.ledgerRows} per-call rows, the oldest ${new Date(store.ledgerOldest).toISOString().slice(0, 10)}: ${days} days older than any budget reads (folded into day totals, the ledger stays bounded)`];
  }
  return [];
}

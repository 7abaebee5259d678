// The store stays small: its size after each night is kept (and printed at the end), and the
// ledger keeps per-call rows only for the months a budget can still read (docs/cli-contract.md, "A
// bounded ledger"): none charged before the start of the month before the one the night's last run
// started in, but the dearest call of each service and operation (which the worst case of a call
// is read from).

/** The start of the UTC month before the one `at` falls in. */
export function foldedBefore(at) {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - 1, 1);
}

export function checkStoreSize({ store, figures, state }) {
  figures.storeBytes = store.bytes;
  figures.maxStoreBytes = Math.max(figures.maxStoreBytes, store.bytes);
  figures.ledgerRows = store.ledgerRows;
  figures.maxLedgerRows = Math.max(figures.maxLedgerRows ?? 0, store.ledgerRows);
  const { rows, kinds } = store.ledgerOld;
  if (rows > kinds && !state.said.has('ledger')) {
    state.said.add('ledger');
    return [
      `the ledger keeps ${store.ledgerRows} per-call rows, ${rows} of them older than the month before this one (the oldest ${new Date(store.ledgerOldest).toISOString().slice(0, 10)}): a budget reads none of them (they belong in the day totals: the ledger stays bounded)`,
    ];
  }
  return [];
}

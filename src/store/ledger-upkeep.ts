// Keeping the ledger small (docs/cli-contract.md, "Spending over days and months": a bounded
// ledger), clearing it with the answers (`store clear`), and its size (`store stats`).
//
// The ledger keeps one row per charged call, and `ledger_totals` (kept by a trigger in the same
// transaction) one per service and UTC day. A budget reads only the totals of the current day or
// month; nothing reads a per-call row once its month is over but the reconciliation of a lapsed
// hold (store-spend.ts: minutes old) and the most a call has cost (ledger-reader.ts). So the rows
// older than the start of the previous UTC month are folded away, each operation's dearest kept per
// service: the totals already hold them, and `store spend` lists totals. A month's margin is kept so
// that a run whose clock is behind, or a person reading `ledger_view` about last month, still finds
// its rows. At 1,000 charged calls a night the ledger stays under about 62,000 rows (two months).
import { periodAt } from '../core/budget-periods.js';
import { prepareRaw, type Database } from './sqlite.js';

/** The start of the month before the one `now` falls in (UTC): per-call rows older than this are folded. */
export function foldBefore(now: number): number {
  const month = periodAt('month', now);
  return periodAt('month', month.start - 1).start;
}

/**
 * Deletes the per-call rows charged before `before`, keeping, per service and operation, the row
 * of its dearest call; one statement, in its own transaction. Returns how many rows went.
 * Done by each run as it opens its ledger (open-run.ts), never per call.
 */
export function foldLedger(db: Database, before: number): number {
  // SQLite's bare column beside max(): `rowid` is the dearest row's (https://sqlite.org/lang_select.html#bareagg).
  return Number(
    db
      .prepare(
        `DELETE FROM ledger WHERE charged_at < ? AND rowid NOT IN (
           SELECT kept FROM (SELECT rowid AS kept, max(credits) FROM ledger WHERE lapsed = 0 GROUP BY service, op))`,
      )
      .run(before).changes,
  );
}

/** Deletes the ledger of `service` (every service when undefined): its per-call rows and its totals. Returns how many calls' totals went. */
export function clearLedger(db: Database, service: string | undefined): number {
  const where = service === undefined ? '' : ' WHERE service = ?';
  const params = service === undefined ? [] : [service];
  const [calls] = prepareRaw(db, `SELECT total(calls) FROM ledger_totals${where}`).get(...params) as unknown as [number];
  db.prepare(`DELETE FROM ledger${where}`).run(...params);
  db.prepare(`DELETE FROM ledger_totals${where}`).run(...params);
  return calls;
}

/** The ledger's size, for `store stats`: its per-call rows, the days it has totals for, and the bytes of both tables. */
export interface LedgerSize {
  rows: number;
  days: number;
  bytes: number | undefined;
}

export function ledgerSize(db: Database): LedgerSize {
  const rows = (prepareRaw(db, 'SELECT count(*) FROM ledger').get() as unknown as [number])[0];
  const days = (prepareRaw(db, 'SELECT count(DISTINCT day) FROM ledger_totals').get() as unknown as [number])[0];
  return { rows, days, bytes: tableBytes(db, ['ledger', 'ledger_totals']) };
}

/** The pages `tables` take, from SQLite's dbstat table where this build has it (undefined where not). */
function tableBytes(db: Database, tables: string[]): number | undefined {
  try {
    const row = prepareRaw(db, `SELECT total(pgsize) FROM dbstat WHERE name IN (${tables.map(() => '?').join(', ')})`).get(...tables) as unknown as [number];
    return row[0];
  } catch {
    return undefined;
  }
}

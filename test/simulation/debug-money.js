// SIM_DEBUG=1, under a failing night: what the money guards read. The sandbox's balance now, and the
// dearest charge per operation the store's ledger keeps (a run holds that much per call: a figure
// far above any price would make the reserve or a budget refuse at once). Seed 2027's night 274 once
// stopped at the credit reserve with 8,000 credits set for the night and 3 spent, and passed on replay.
import { DatabaseSync } from 'node:sqlite';

/** Lines that say the balance and the dearest charges, or why they could not be read. */
export function moneyLines(sandbox, storeFile) {
  const lines = [`sandbox balance now: ${sandbox.credits}`];
  try {
    const db = new DatabaseSync(storeFile, { readOnly: true });
    try {
      const rows = db.prepare('SELECT service, op, max(credits) AS most, sum(lapsed) AS lapsed FROM ledger GROUP BY service, op').all();
      for (const row of rows) lines.push(`ledger: ${row.service} ${row.op}: dearest ${row.most}, lapsed rows ${row.lapsed}`);
      const holds = db.prepare('SELECT count(*) AS n, coalesce(max(credits), 0) AS most FROM spend_holds').get();
      lines.push(`holds left: ${holds.n}, the largest ${holds.most}`);
    } finally {
      db.close();
    }
  } catch (error) {
    lines.push(`the store could not be read: ${error.message}`);
  }
  return lines;
}

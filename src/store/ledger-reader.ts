// What the ledger says (schema v9; docs/cli-contract.md, "Spending over days and months"): a
// period's spend for one service, which is what a budget counts (its service: the base URL the run
// is pointed at, as the ledger's `service` column names it), the credits calls in flight hold, and
// the per-day totals `store spend` lists. Every read but the most a call has cost is of
// `ledger_totals`, one row per service and UTC day, which outlives the per-call rows it sums
// (ledger-upkeep.ts folds those away).
import { dayNumber, DAY_MS, type Period } from '../core/budget-periods.js';
import { prepareRaw, type Database, type Statement } from './sqlite.js';

/** Credits per UTC day (`2026-03-14`) or month (`2026-03`), the charged calls, and how much of it is lapsed holds (their worst case). */
export interface SpendRow {
  period: string;
  credits: number;
  calls: number;
  lapsed: number;
}

const dayName = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

export class LedgerReader {
  readonly #db: Database;
  readonly #spent: Statement;
  readonly #held: Statement;

  constructor(db: Database) {
    this.#db = db;
    this.#spent = prepareRaw(db, 'SELECT total(credits) FROM ledger_totals WHERE service = ? AND day >= ? AND day < ?');
    this.#held = prepareRaw(db, 'SELECT total(credits) FROM spend_holds WHERE service = ? AND made_at >= ? AND made_at < ?');
  }

  /** Credits charged to `service` in `period` (committed; lapsed holds included at their worst case). */
  spentIn(period: Period, service: string): number {
    return (this.#spent.get(service, dayNumber(period.start), dayNumber(period.end)) as unknown as [number])[0];
  }

  /** What `period` has spent for `service`, and what calls in flight of every run hold in it for that service. */
  standing(period: Period, service: string): { spent: number; held: number } {
    return { spent: this.spentIn(period, service), held: (this.#held.get(service, period.start, period.end) as unknown as [number])[0] };
  }

  /** The services with a charge or a hold, by name. */
  services(): string[] {
    const rows = prepareRaw(this.#db, 'SELECT service FROM ledger_totals UNION SELECT service FROM spend_holds ORDER BY 1').all() as unknown as Array<[string]>;
    return rows.map(([service]) => service);
  }

  /**
   * The last `count` UTC days with a charge, oldest first, whatever their date: a charge dated
   * after this machine's clock (another machine's, whose clock is ahead) is listed like any.
   * Of `service`, or of every service together.
   */
  days(count: number, service?: string): SpendRow[] {
    const where = service === undefined ? '' : 'WHERE service = ?';
    const rows = prepareRaw(
      this.#db,
      `SELECT day, sum(credits), sum(calls), sum(lapsed) FROM ledger_totals ${where} GROUP BY day ORDER BY day DESC LIMIT ?`,
    ).all(...(service === undefined ? [] : [service]), count) as unknown as Array<[number, number, number, number]>;
    return rows.reverse().map(([day, credits, calls, lapsed]) => ({ period: dayName(day), credits, calls, lapsed }));
  }

  /** The last `count` UTC months with a charge, oldest first (as `days`). */
  months(count: number, service?: string): SpendRow[] {
    const months: SpendRow[] = [];
    for (const day of this.days(Number.MAX_SAFE_INTEGER, service)) {
      const key = day.period.slice(0, 7);
      const last = months.at(-1);
      if (last?.period === key) {
        last.credits += day.credits;
        last.calls += day.calls;
        last.lapsed += day.lapsed;
      } else months.push({ ...day, period: key });
    }
    return months.slice(-count);
  }

  /** Every credit and call the ledger counts, of `service` or of all (what `store clear` would remove). */
  total(service?: string): { credits: number; calls: number } {
    const where = service === undefined ? '' : ' WHERE service = ?';
    const [credits, calls] = prepareRaw(this.#db, `SELECT total(credits), total(calls) FROM ledger_totals${where}`).get(
      ...(service === undefined ? [] : [service]),
    ) as unknown as [number, number];
    return { credits, calls };
  }

  /** Credits held now by calls in flight (or by runs that stopped, until a run lapses them), of `service` or of all. */
  heldNow(service?: string): number {
    const where = service === undefined ? '' : ' WHERE service = ?';
    return (prepareRaw(this.#db, `SELECT total(credits) FROM spend_holds${where}`).get(...(service === undefined ? [] : [service])) as unknown as [number])[0];
  }

  /** When the newest charge was made, as the run that made it dated it (epoch ms); undefined for an empty ledger. */
  newestCharge(service?: string): number | undefined {
    const where = service === undefined ? '' : ' WHERE service = ?';
    const row = prepareRaw(this.#db, `SELECT max(charged_at) FROM ledger${where}`).get(...(service === undefined ? [] : [service])) as unknown as [
      number | null,
    ];
    return row[0] ?? undefined;
  }

  /**
   * The most one call of each operation was charged by `service`, over every per-call row the
   * ledger keeps (the fold keeps each operation's dearest: ledger-upkeep.ts). Lapsed holds are
   * estimates, not charges: not counted.
   */
  mostCharged(service: string): Map<string, number> {
    const rows = prepareRaw(this.#db, 'SELECT op, max(credits) FROM ledger WHERE service = ? AND lapsed = 0 GROUP BY op').all(service) as unknown as Array<
      [string, number]
    >;
    return new Map(rows);
  }
}

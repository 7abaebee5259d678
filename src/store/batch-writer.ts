// What a store has pending, written in one IMMEDIATE transaction (it takes the write lock up
// front, so the busy timeout applies): the answers, upserted (a refresh replaces the current
// answer; the history trigger keeps the one it replaced, schema.ts v8), and the ledger's settled
// calls (store-spend.ts). The read path is result-store.ts.
import { immediateTransaction, prepareRaw, type Database, type Statement } from './sqlite.js';
import { SettleWriter, type Settle } from './store-spend.js';
import type { Pending } from './stored-result.js';

export class BatchWriter {
  readonly #db: Database;
  /** The store's cache of committed service ids, shared with its reads. */
  readonly #serviceIds: Map<string, number>;
  /** A service's id, the service registered first if it is new. */
  readonly #registerService: Statement;
  /** Made at the first batch. */
  #settles: SettleWriter | undefined;
  readonly #upsertResult: Statement;

  constructor(db: Database, serviceIds: Map<string, number>) {
    this.#db = db;
    this.#serviceIds = serviceIds;
    // DO UPDATE, not DO NOTHING: RETURNING gives the id of a row the statement inserted or updated only.
    this.#registerService = prepareRaw(db, 'INSERT INTO services (name) VALUES (?) ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id');
    this.#upsertResult = db.prepare(
      `INSERT INTO results (service_id, op, key, found, data, fetched_at, run_id, cells, refused)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (service_id, op, key) DO UPDATE SET
         found = excluded.found, data = excluded.data,
         fetched_at = excluded.fetched_at, run_id = excluded.run_id, cells = excluded.cells, refused = excluded.refused`,
    );
  }

  /**
   * Writes `batch` and `settles` in one transaction. Ids of services first inserted here are
   * cached only after COMMIT: a rolled-back id could later belong to another service, and results
   * would then mix.
   */
  write(batch: Map<string, Pending>, settles: readonly Settle[]): void {
    const fresh = immediateTransaction(this.#db, () => {
      (this.#settles ??= new SettleWriter(this.#db)).write(settles);
      const registered = new Map<string, number>();
      for (const entry of batch.values()) {
        let serviceId = this.#serviceIds.get(entry.service) ?? registered.get(entry.service);
        if (serviceId === undefined) {
          serviceId = Number((this.#registerService.get(entry.service) as unknown as [number])[0]);
          registered.set(entry.service, serviceId);
        }
        this.#upsertResult.run(serviceId, entry.op, entry.key, entry.found ? 1 : 0, entry.json, entry.fetchedAt, entry.runId, entry.cells, entry.refused);
      }
      return registered;
    });
    for (const [name, id] of fresh) this.#serviceIds.set(name, id);
  }
}

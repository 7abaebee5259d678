// The result store's on-disk format: who owns the file (application id), which schema it holds
// (user_version) and how an older one is brought up to date. Opening the file is open-database.ts;
// reading and writing entries is result-store.ts.

import { ConfigError } from '../api/errors.js';
import type { Operation } from '../api/types.js';
import type { CellsRenderer } from './answer-cells.js';
import { cellsText } from './answer-cells.js';
import { anotherStore } from './store-options.js';
import { immediateTransaction, pragma, prepareRaw, type Database } from './sqlite.js';
import { parsedOrUndefined } from './stored-result.js';

/** Marks the file as ours ('LENR'), so a stranger SQLite database is refused, not modified. */
export const APPLICATION_ID = 0x4c454e52;

/**
 * Schema migrations: MIGRATIONS[i] takes a store from version i to i + 1 (PRAGMA user_version).
 * Append, never edit.
 *
 * v1 notes:
 * - `services` maps the (long, repeated) service name to a small integer, which keeps the primary
 *   key index small. Rows of `services` are never deleted: another process may hold an id in its
 *   cache, and SQLite would reuse a deleted max id for a different service.
 * - `data` is the API's JSON `data` as text (NULL when the answer had none); parsed on get.
 * - An ordinary rowid table (not WITHOUT ROWID) because rows carry a JSON body of ~1 KB, well above
 *   the size where WITHOUT ROWID pays off.
 * - The fetched_at index makes prune() and stats()'s oldest/newest cheap on large stores.
 */
const MIGRATIONS: ReadonlyArray<string | ((db: Database, upgrade: Upgrade) => void)> = [
  `
  CREATE TABLE services (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
  );
  CREATE TABLE results (
    service_id INTEGER NOT NULL REFERENCES services (id),
    op         TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    found      INTEGER NOT NULL CHECK (found IN (0, 1)),
    data       TEXT,
    fetched_at INTEGER NOT NULL,
    run_id     TEXT    NOT NULL,
    PRIMARY KEY (service_id, op, key)
  );
  CREATE INDEX results_fetched_at ON results (fetched_at);
  -- For people inspecting the file with the sqlite3 shell.
  CREATE VIEW results_view AS
    SELECT s.name AS service, r.op, r.key, r.found, r.data,
           strftime('%Y-%m-%dT%H:%M:%fZ', r.fetched_at / 1000.0, 'unixepoch') AS fetched_at_utc,
           r.run_id
    FROM results r JOIN services s ON s.id = r.service_id;
  `,
  addAnswerCells,
  renderAnswerCells,
  // v4: a key the API refused (400) is an answer about the key, kept like a miss so that
  // a re-run does not send it again; `refused` says why (NULL for every other answer).
  'ALTER TABLE results ADD COLUMN refused TEXT',
  // v5: a key a run is looking up is claimed here, so that another run on the same
  // store waits for that answer instead of paying for it again (store-claims.ts). By service name,
  // not id: a claim may come before the service's first answer. Few rows: only keys in flight.
  `
  CREATE TABLE claims (
    service    TEXT    NOT NULL,
    op         TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    owner      TEXT    NOT NULL,
    pid        INTEGER NOT NULL,
    host       TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (service, op, key)
  ) WITHOUT ROWID;
  CREATE INDEX claims_owner ON claims (owner);
  `,
  // v6: the runs that have the store open for lookups (store-claims.ts). A run alone on its store
  // claims nothing (a claim is a commit per key); it starts to once another run registers here,
  // and says so (`claiming`), which is what the newcomer waits for before its own first claim.
  `
  CREATE TABLE runs (
    owner      TEXT    PRIMARY KEY,
    pid        INTEGER NOT NULL,
    host       TEXT    NOT NULL,
    expires_at INTEGER NOT NULL,
    claiming   INTEGER NOT NULL CHECK (claiming IN (0, 1))
  ) WITHOUT ROWID;
  `,
  // v7: the ledger (store-spend.ts, docs/cli-contract.md "Spending over days and months"): one row
  // per charged call, written in the commit that keeps its answer; `ledger_days` sums it per UTC
  // day (kept by the trigger, in the same transaction), which is what a budget's check and
  // `store spend` read: a month is at most 31 of its rows. `spend_holds`: the credits reserved by
  // calls in flight, against the day and month budgets of every run on the store; few rows.
  `
  CREATE TABLE ledger (
    charged_at INTEGER NOT NULL,
    service    TEXT    NOT NULL,
    op         TEXT    NOT NULL,
    credits    INTEGER NOT NULL,
    run_id     TEXT    NOT NULL
  );
  CREATE TABLE ledger_days (
    day     INTEGER PRIMARY KEY,
    credits INTEGER NOT NULL,
    calls   INTEGER NOT NULL
  );
  CREATE TRIGGER ledger_day AFTER INSERT ON ledger BEGIN
    INSERT INTO ledger_days (day, credits, calls) VALUES (NEW.charged_at / 86400000, NEW.credits, 1)
      ON CONFLICT (day) DO UPDATE SET credits = credits + excluded.credits, calls = calls + 1;
  END;
  CREATE VIEW ledger_view AS
    SELECT strftime('%Y-%m-%dT%H:%M:%fZ', charged_at / 1000.0, 'unixepoch') AS charged_at_utc, service, op, credits, run_id
    FROM ledger;
  CREATE TABLE spend_holds (
    owner      TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    pid        INTEGER NOT NULL,
    host       TEXT    NOT NULL,
    credits    INTEGER NOT NULL,
    made_at    INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (owner, seq)
  ) WITHOUT ROWID;
  `,
  // v8: every answer a key had before its current one (docs/cli-contract.md, "What changed since the
  // last answer"). `results` keeps the current answer where reads find it fast; the trigger copies
  // the answer a fetch replaces here, with when it was fetched and when it was replaced, so no
  // write path has to remember to. An answer the new fetch repeats (`same` = 1) keeps no second
  // copy of its data: its row says only that the key was checked then (about 150 bytes), so a
  // key's store grows by a whole answer only when its answer changes. A new table, an index and a
  // trigger: no stored row is read or rewritten, so the upgrade of a large store is instant.
  // Ordinary rowid table, no unique key: a trigger's insert must never fail the commit of an answer.
  `
  CREATE TABLE history (
    service_id  INTEGER NOT NULL,
    op          TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    fetched_at  INTEGER NOT NULL,
    replaced_at INTEGER NOT NULL,
    found       INTEGER NOT NULL,
    same        INTEGER NOT NULL CHECK (same IN (0, 1)),
    data        TEXT,
    refused     TEXT
  );
  CREATE INDEX history_key ON history (service_id, op, key, replaced_at);
  CREATE INDEX history_fetched_at ON history (fetched_at);
  CREATE TRIGGER results_history AFTER UPDATE OF fetched_at ON results WHEN old.fetched_at IS NOT new.fetched_at
  BEGIN
    INSERT INTO history (service_id, op, key, fetched_at, replaced_at, found, same, data, refused)
    SELECT old.service_id, old.op, old.key, old.fetched_at, new.fetched_at, old.found, same, CASE WHEN same THEN NULL ELSE old.data END, old.refused
    FROM (SELECT old.found = new.found AND old.data IS new.data AND old.refused IS new.refused AS same);
  END;
  `,
  // v9: the ledger by service, the holds of runs that died, and changes reported once
  // (docs/cli-contract.md, "Spending over days and months" and "What changed since the last answer").
  // - `ledger_totals` replaces `ledger_days`: a UTC day's credits and calls per service (the
  //   service a budget counts), rebuilt from the ledger's own rows, which have named their service
  //   since v7. It is what budgets and `store spend` read, and what is left of a day once its
  //   per-call rows are folded away.
  // - `ledger.lapsed` = 1: not a charge the service is known to have made, but the hold of a run
  //   that died, counted at its worst case (the service may have charged it: its answer was lost).
  //   `ledger_totals.lapsed` sums them apart, so `store spend` can say how much is such an estimate.
  // - `spend_holds.service` and `op`: a hold says what it would be charged to, so that a lapsed hold
  //   becomes a ledger row of its service.
  // - `history.reported` = 1 once a `--changes` file has listed the change from this answer to the
  //   one that replaced it (or there was none: `same`). Answers replaced before this version count as
  //   reported: which of them a `--changes` file listed is not known, and listing them all again on
  //   the first run after the upgrade would report months of changes twice.
  `
  ALTER TABLE ledger ADD COLUMN lapsed INTEGER NOT NULL DEFAULT 0 CHECK (lapsed IN (0, 1));
  CREATE TABLE ledger_totals (
    service TEXT    NOT NULL,
    day     INTEGER NOT NULL,
    credits INTEGER NOT NULL,
    calls   INTEGER NOT NULL,
    lapsed  INTEGER NOT NULL,
    PRIMARY KEY (service, day)
  ) WITHOUT ROWID;
  INSERT INTO ledger_totals (service, day, credits, calls, lapsed)
    SELECT service, charged_at / 86400000, sum(credits), count(*), 0 FROM ledger GROUP BY service, charged_at / 86400000;
  DROP TRIGGER ledger_day;
  DROP TABLE ledger_days;
  CREATE TRIGGER ledger_total AFTER INSERT ON ledger BEGIN
    INSERT INTO ledger_totals (service, day, credits, calls, lapsed)
      VALUES (NEW.service, NEW.charged_at / 86400000, NEW.credits, 1, CASE WHEN NEW.lapsed = 1 THEN NEW.credits ELSE 0 END)
      ON CONFLICT (service, day) DO UPDATE SET credits = credits + excluded.credits, calls = calls + 1, lapsed = lapsed + excluded.lapsed;
  END;
  DROP VIEW ledger_view;
  CREATE VIEW ledger_view AS
    SELECT strftime('%Y-%m-%dT%H:%M:%fZ', charged_at / 1000.0, 'unixepoch') AS charged_at_utc, service, op, credits, lapsed, run_id
    FROM ledger;
  ALTER TABLE spend_holds ADD COLUMN service TEXT NOT NULL DEFAULT '';
  ALTER TABLE spend_holds ADD COLUMN op TEXT NOT NULL DEFAULT '';
  ALTER TABLE history ADD COLUMN reported INTEGER NOT NULL DEFAULT 1 CHECK (reported IN (0, 1));
  CREATE INDEX history_unreported ON history (service_id, replaced_at) WHERE reported = 0;
  DROP TRIGGER results_history;
  CREATE TRIGGER results_history AFTER UPDATE OF fetched_at ON results WHEN old.fetched_at IS NOT new.fetched_at
  BEGIN
    INSERT INTO history (service_id, op, key, fetched_at, replaced_at, found, same, data, refused, reported)
    SELECT old.service_id, old.op, old.key, old.fetched_at, new.fetched_at, old.found, same, CASE WHEN same THEN NULL ELSE old.data END, old.refused, same
    FROM (SELECT old.found = new.found AND old.data IS new.data AND old.refused IS new.refused AS same);
  END;
  `,
];

/** Rows rendered per statement while migrating: bounds the memory of a 1 M-entry store's upgrade. */
const BACKFILL_CHUNK = 5_000;

/**
 * v2: `cells` holds an answer's own added columns, rendered when the answer is stored
 * (by the caller: store/answer-cells.ts), so a stored answer becomes CSV without JSON.parse of the whole
 * lead. NULL for operations that fill no such columns (mx, whois); a row whose `cells` is NULL, or
 * holds cells of another layout, is still read correctly from `data`. The existing answers are
 * rendered by the v3 step, which always follows: rendering them here too would do it twice.
 */
function addAnswerCells(db: Database): void {
  db.exec('ALTER TABLE results ADD COLUMN cells TEXT');
}

/**
 * v3: the cells as one comma-separated CSV record (write/stored-cells.ts), which a CSV
 * run writes as it is, instead of v2's JSON array. Every stored lookup answer is rendered, once, by
 * the renderer the opener handed over, so a store written by an older version answers as fast as a
 * new one. Opened without one (a library caller's ResultStore.open), the cells stay empty: the
 * answers are still read, from their JSON.
 */
function renderAnswerCells(db: Database, upgrade: Upgrade): void {
  const renderer = upgrade.cells;
  if (renderer === undefined) return;
  const select = prepareRaw(
    db,
    `SELECT rowid, op, data FROM results WHERE rowid > ? AND op IN ('lookup_email', 'lookup_url', 'lookup_domain') ORDER BY rowid LIMIT ?`,
  );
  const update = db.prepare('UPDATE results SET cells = ? WHERE rowid = ?');
  for (let after = 0; ; ) {
    const rows = select.all(after, BACKFILL_CHUNK) as unknown as Array<[number, string, string | null]>;
    if (rows.length === 0) return;
    for (const [rowid, op, data] of rows) {
      // An answer that is not JSON keeps no cells: a run finds it absent and looks it up again.
      const parsed = data === null ? undefined : parsedOrUndefined(data);
      if (data !== null && parsed === undefined) continue;
      const cells = renderer.render(op as Operation, parsed);
      if (cells !== undefined) update.run(cellsText(cells), rowid);
    }
    after = rows[rows.length - 1]![0];
  }
}

export const SCHEMA_VERSION = MIGRATIONS.length;

/** The schema from which stored answers have their cells: an upgrade from before renders them all. */
const RENDERED_FROM = 3;

interface Header {
  version: number;
  appId: number;
  tables: number;
}

function readHeader(db: Database): Header {
  return {
    // The first read of the file: this is where a non-database file fails (SQLITE_NOTADB).
    version: pragma(db, 'user_version') as number,
    appId: pragma(db, 'application_id') as number,
    tables: (prepareRaw(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'").get() as unknown as [number])[0],
  };
}

/** Whose the file is: a new, empty one; ours (by its application id); or another program's database. */
export function ownership(db: Database): 'empty' | 'ours' | 'foreign' {
  return ownershipOf(readHeader(db));
}

function ownershipOf(header: Header): 'empty' | 'ours' | 'foreign' {
  if (header.version === 0 && header.tables === 0 && header.appId === 0) return 'empty';
  return header.appId === APPLICATION_ID ? 'ours' : 'foreign';
}

/** Refuses a file that is not ours or is newer than this version; true when the file is empty. */
function checkHeader(header: Header, filePath: string): boolean {
  const empty = ownershipOf(header) === 'empty';
  if (ownershipOf(header) === 'foreign') {
    throw new ConfigError(`Cannot open the result store at ${filePath}: it is a SQLite database but not a lead-enrich result store; ` + anotherStore());
  }
  if (header.version > SCHEMA_VERSION) {
    throw new ConfigError(
      `Cannot open the result store at ${filePath}: it was written by a newer lead-enrich (schema ${header.version}, ` +
        `this version knows ${SCHEMA_VERSION}). Upgrade lead-enrich, or ${anotherStore()}`,
    );
  }
  return empty;
}

/** Told before an older store is upgraded (the upgrade may take a while: the caller says so). */
export type UpgradeNotice = (fromVersion: number, toVersion: number, slow: boolean) => void;

/** What an upgrade needs from the opener: whom to tell, and how answers' cells are rendered. */
export interface Upgrade {
  notice: UpgradeNotice;
  cells: CellsRenderer | undefined;
}

/** Settings, ownership check, and schema creation/upgrade. Throws ConfigError for a foreign file. */
export function migrate(db: Database, filePath: string, readonly: boolean, upgrade: Upgrade = { notice: () => {}, cells: undefined }): void {
  const header = readHeader(db);
  const empty = checkHeader(header, filePath);

  if (readonly) {
    if (empty || header.version < SCHEMA_VERSION) {
      throw new ConfigError(
        `Cannot open the result store at ${filePath} read-only: it is ${empty ? 'empty' : 'an older version'}; ` +
          'open it once for writing (any enrich run) to set it up.',
      );
    }
    return;
  }

  if (empty) {
    // Must precede the first table; lets prune()/clear() shrink the file.
    db.exec('PRAGMA auto_vacuum = INCREMENTAL');
  }
  // Persistent in the file; readers never block the writer and vice versa, and a second process
  // can share the store. NORMAL: a commit survives a process crash (not necessarily a power cut).
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');

  if (header.version === SCHEMA_VERSION) return;
  immediateTransaction(db, () => {
    // Read again under the write lock: another process may have migrated meanwhile.
    const current = readHeader(db);
    checkHeader(current, filePath);
    // Slow only when every stored answer is rendered again (v2 → v3); adding a column is instant.
    if (current.version > 0) upgrade.notice(current.version, SCHEMA_VERSION, current.version < RENDERED_FROM);
    for (let version = current.version; version < SCHEMA_VERSION; version++) {
      const step = MIGRATIONS[version]!;
      if (typeof step === 'string') db.exec(step);
      else step(db, upgrade);
    }
    db.exec(`PRAGMA application_id = ${APPLICATION_ID}`);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  });
}

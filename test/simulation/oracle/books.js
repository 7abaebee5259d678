// The two sets of books the oracle reads after every night: the sandbox's (every keyed answer it
// sent: when, at which epoch, what it charged) and the store's (its answers, their history, the
// ledger and the holds), the latter read straight from the SQLite file, as a person with the
// sqlite3 shell would. Every stored answer is matched to the answer the sandbox sent for it.
import fs from 'node:fs';
import { DatabaseSync } from 'node:sqlite';

/** How long after the sandbox answered the client may have stamped the answer it stored (latency, a loaded machine). */
export const MATCH_MS = 15_000;

/** The served answers of the email lookups, by key, oldest first; kept up to date from the sandbox's log. */
export class ServedIndex {
  #cursor = 0;
  byKey = new Map();
  /** Every charge, oldest first: { at, key, credits }. */
  charges = [];

  update(sandbox) {
    const log = sandbox.answers;
    const fresh = log.slice(this.#cursor);
    this.#cursor = log.length;
    for (const answer of fresh) {
      if (answer.op !== 'lookup_email') continue;
      const list = this.byKey.get(answer.key) ?? [];
      list.push(answer);
      this.byKey.set(answer.key, list);
      if (answer.credits > 0) this.charges.push(answer);
    }
    return fresh.filter((answer) => answer.op === 'lookup_email');
  }
}

const fileSize = (file) => (fs.existsSync(file) ? fs.statSync(file).size : 0);

/**
 * What the read of the store kept from earlier nights: its history rows (the table only grows),
 * and the current answers' data by key and fetch time (an answer never changes once stored: a new
 * fetch is a new answer), so that each night reads and parses only its own answers.
 */
export function storeCache() {
  return { historyRowid: 0, history: [], current: new Map() };
}

const TABLES = ['results', 'history', 'ledger_totals', 'ledger', 'spend_holds'];

/** What the store holds now; `foldedBefore`: the time before which the ledger should keep no per-call row. */
export function readStore(file, cache = storeCache(), foldedBefore = 0) {
  const view = {
    answers: [],
    byKey: new Map(),
    ledgerDays: new Map(),
    ledgerRows: 0,
    ledgerOldest: undefined,
    ledgerOld: { rows: 0, kinds: 0 },
    holds: [],
    ready: false,
    bytes: fileSize(file) + fileSize(`${file}-wal`),
  };
  if (!fs.existsSync(file)) return view;
  const db = new DatabaseSync(file);
  try {
    // A store whose first run was killed before it made its tables holds nothing yet.
    if (db.prepare(`SELECT count(*) AS n FROM sqlite_schema WHERE name IN (${TABLES.map(() => '?').join(', ')})`).get(...TABLES).n < TABLES.length) return view;
    view.ready = true;
    readAnswers(db, cache, view);
    for (const r of db.prepare('SELECT day, sum(credits) AS credits, sum(lapsed) AS lapsed FROM ledger_totals GROUP BY day').all())
      view.ledgerDays.set(r.day, { credits: r.credits, lapsed: r.lapsed });
    const ledger = db.prepare('SELECT count(*) AS n, min(charged_at) AS oldest FROM ledger').get();
    view.ledgerRows = ledger.n;
    view.ledgerOldest = ledger.oldest ?? undefined;
    view.holds = db.prepare('SELECT owner, pid, credits, made_at FROM spend_holds').all();
    // The per-call rows older than `foldedBefore`, and how many (service, operation) they are of.
    view.ledgerOld = db.prepare("SELECT count(*) AS rows, count(DISTINCT service || '|' || op) AS kinds FROM ledger WHERE charged_at < ?").get(foldedBefore);
  } finally {
    db.close();
  }
  for (const answer of view.answers.sort((a, b) => a.fetchedAt - b.fetchedAt)) {
    const list = view.byKey.get(answer.key) ?? [];
    list.push(answer);
    view.byKey.set(answer.key, list);
  }
  return view;
}

function readAnswers(db, cache, view) {
  const dataOf = db.prepare("SELECT data FROM results WHERE op = 'lookup_email' AND key = ? AND fetched_at = ?");
  const current = new Map();
  const before = cache.current;
  for (const r of db.prepare("SELECT key, found, fetched_at FROM results WHERE op = 'lookup_email'").all()) {
    const id = `${r.key}|${r.fetched_at}`;
    const answer = cache.current.get(id) ?? {
      key: r.key,
      found: r.found === 1,
      data: parsed(dataOf.get(r.key, r.fetched_at)?.data ?? null),
      fetchedAt: r.fetched_at,
      where: 'current',
    };
    current.set(id, answer);
  }
  cache.current = current;
  for (const r of db
    .prepare("SELECT rowid, key, found, same, data, fetched_at, replaced_at FROM history WHERE op = 'lookup_email' AND rowid > ? ORDER BY rowid")
    .all(cache.historyRowid)) {
    cache.history.push({
      key: r.key,
      found: r.found === 1,
      data: parsed(r.data),
      fetchedAt: r.fetched_at,
      where: 'history',
      same: r.same === 1,
      replacedAt: r.replaced_at,
    });
    cache.historyRowid = r.rowid;
  }
  view.answers.push(...current.values(), ...cache.history);
  view.replacedWithoutHistory = replacedWithoutHistory(before, current, cache.history);
}

/**
 * The answers the store held on an earlier night and holds no more, though their key has a newer
 * one, that its history does not keep: the changes from them could be listed by nobody. Read from
 * what the oracle itself saw in `results`, not from the history table, so that a history that is
 * not written cannot hide its own loss.
 */
function replacedWithoutHistory(before, current, history) {
  const kept = new Set(history.map((answer) => `${answer.key}|${answer.fetchedAt}`));
  const keysNow = new Set([...current.values()].map((answer) => answer.key));
  return [...before.values()].filter(
    (answer) => !current.has(`${answer.key}|${answer.fetchedAt}`) && keysNow.has(answer.key) && !kept.has(`${answer.key}|${answer.fetchedAt}`),
  );
}

function parsed(text) {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return { unreadable: text };
  }
}

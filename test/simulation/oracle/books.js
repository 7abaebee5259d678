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

  /** The answer a stored one came from: the latest the sandbox sent for the key at most MATCH_MS before it was stamped. */
  sourceOf(key, fetchedAt) {
    const list = this.byKey.get(key) ?? [];
    for (let i = list.length - 1; i >= 0; i -= 1) {
      const served = list[i];
      if (served.at <= fetchedAt) return fetchedAt - served.at <= MATCH_MS ? served : undefined;
    }
    return undefined;
  }
}

const fileSize = (file) => (fs.existsSync(file) ? fs.statSync(file).size : 0);

/**
 * What the store holds now. `parsed` keeps the answers read on earlier nights (an answer never
 * changes once stored: a new fetch is a new answer), so each night parses only its own.
 */
export function readStore(file, parsed = new Map()) {
  const view = { answers: [], byKey: new Map(), ledgerDays: new Map(), ledgerRows: 0, ledgerOldest: undefined, holds: [], bytes: fileSize(file) + fileSize(`${file}-wal`) };
  if (!fs.existsSync(file)) return view;
  const db = new DatabaseSync(file);
  try {
    // A store whose first run was killed before it made its tables holds nothing yet.
    if (db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name IN ('results', 'history', 'ledger_totals', 'ledger', 'spend_holds')").get().n < 5) return view;
    const rows = (sql) => db.prepare(sql).all();
    for (const r of rows("SELECT key, found, data, fetched_at FROM results WHERE op = 'lookup_email'")) view.answers.push(answerOf(r, 'current', parsed));
    for (const r of rows("SELECT key, found, same, data, fetched_at, replaced_at, reported FROM history WHERE op = 'lookup_email'")) view.answers.push({ ...answerOf(r, 'history', parsed), same: r.same === 1, replacedAt: r.replaced_at, reported: r.reported });
    for (const r of rows('SELECT day, sum(credits) AS credits, sum(lapsed) AS lapsed FROM ledger_totals GROUP BY day')) view.ledgerDays.set(r.day, { credits: r.credits, lapsed: r.lapsed });
    const ledger = db.prepare('SELECT count(*) AS n, min(charged_at) AS oldest FROM ledger').get();
    view.ledgerRows = ledger.n;
    view.ledgerOldest = ledger.oldest ?? undefined;
    view.holds = rows('SELECT owner, pid, credits, made_at FROM spend_holds');
  } finally {
    db.close();
  }
  view.byKey = new Map();
  for (const answer of view.answers.sort((a, b) => a.fetchedAt - b.fetchedAt)) {
    const list = view.byKey.get(answer.key) ?? [];
    list.push(answer);
    view.byKey.set(answer.key, list);
  }
  return view;
}

function answerOf(r, where, parsed) {
  const id = `${r.key}|${r.fetched_at}|${r.data === null ? 0 : r.data.length}`;
  let data = parsed.get(id);
  if (data === undefined && r.data !== null) {
    try {
      data = JSON.parse(r.data);
    } catch {
      data = { unreadable: r.data };
    }
    parsed.set(id, data);
  }
  return { key: r.key, found: r.found === 1, data, fetchedAt: r.fetched_at, where };
}

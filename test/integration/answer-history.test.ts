// The store's history of answers: the current answer stays in `results`, where reads
// find it; the answer a fetch replaces is kept in `history` with when it was fetched and replaced
// (a whole copy only when the answer changed: a check that brought the same answer keeps a small
// row saying so). Pruned and cleared with the entries; the upgrade of an existing store rewrites
// none of its rows.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ResultStore, SCHEMA_VERSION } from '../../src/store/result-store.js';
import { storeFileBytes } from '../../src/store/store-stats.js';
import { ANSWER_CELLS } from '../../src/write/columns.js';
import { makeTempDir } from '../helpers/files.js';
import { openSqliteFile } from '../helpers/sqlite.js';
import { personAnswer } from '../helpers/person-answer.js';

const opened: ResultStore[] = [];
afterEach(() => {
  for (const store of opened.splice(0)) store.close();
});

function storeAt(file: string, now: () => number = Date.now): ResultStore {
  const store = ResultStore.open({ path: file, now, cells: ANSWER_CELLS });
  opened.push(store);
  return store;
}

const put = (store: ResultStore, key: string, data: unknown, fetchedAt: number, run = 'r') =>
  store.put(
    'svc',
    'lookup_email',
    key,
    { found: data !== undefined, data: data ?? { lead: {} }, fetchedAt, cells: ANSWER_CELLS.render('lookup_email', data ?? { lead: {} }) },
    run,
  );

describe('the history of answers', () => {
  it('keeps every answer a key was given, newest first, the current one where reads find it', () => {
    const store = storeAt(path.join(makeTempDir(), 'store.sqlite'));
    put(store, 'a@x.test', personAnswer('a@x.test', 'Engineer'), 1_000);
    store.flush();
    put(store, 'a@x.test', personAnswer('a@x.test', 'Engineer'), 2_000); // checked again: the same answer
    store.flush();
    put(store, 'a@x.test', personAnswer('a@x.test', 'CTO'), 3_000); // changed
    store.flush();
    put(store, 'a@x.test', undefined, 4_000); // left: not found
    store.flush();
    expect(store.get('svc', 'lookup_email', 'a@x.test')).toMatchObject({ found: false, fetchedAt: 4_000 });
    const listed = [...store.entries({ key: 'a@x.test', history: true })];
    expect(listed.map((e) => [e.status, e.fetchedAt, e.replacedAt, e.data === null ? null : JSON.parse(e.data).lead.title])).toEqual([
      ['not_found', 4_000, undefined, undefined],
      ['found', 3_000, 4_000, 'CTO'],
      ['found', 2_000, 3_000, 'Engineer'],
      // Kept as "the same as the one after it": its data is that one's.
      ['found', 1_000, 2_000, 'Engineer'],
    ]);
    // Without `history`: the current answer alone.
    expect([...store.entries({ key: 'a@x.test' })]).toHaveLength(1);
    expect(store.stats().earlierAnswers).toBe(3);
  });

  it('tells a run what the fetch at a given time replaced: the answer, the same answer, or nothing', () => {
    const store = storeAt(':memory:');
    put(store, 'a@x.test', personAnswer('a@x.test', 'Engineer'), 1_000);
    store.flush();
    put(store, 'a@x.test', personAnswer('a@x.test', 'Engineer'), 2_000);
    store.flush();
    put(store, 'a@x.test', personAnswer('a@x.test', 'CTO'), 3_000);
    // Still pending: the store commits it first (the trigger that keeps the earlier answer runs then).
    expect(store.replaced('svc', 'lookup_email', 'a@x.test', 3_000)).toEqual({
      found: true,
      data: personAnswer('a@x.test', 'Engineer'),
      fetchedAt: 2_000,
      same: false,
    });
    expect(store.replaced('svc', 'lookup_email', 'a@x.test', 2_000)).toEqual({ found: true, data: undefined, fetchedAt: 1_000, same: true });
    expect(store.replaced('svc', 'lookup_email', 'a@x.test', 1_000)).toBeUndefined();
    expect(store.replaced('other', 'lookup_email', 'a@x.test', 3_000)).toBeUndefined();
    // A key the API refused has no answer to compare with.
    store.put('svc', 'lookup_email', 'b@x.test', { found: false, data: undefined, refused: 'malformed', fetchedAt: 1_000 }, 'r');
    store.flush();
    put(store, 'b@x.test', personAnswer('b@x.test', 'CTO'), 2_000);
    expect(store.replaced('svc', 'lookup_email', 'b@x.test', 2_000)).toBeUndefined();
  });

  it('prune and clear take the earlier answers too, by their own fetch time', () => {
    let now = 10_000;
    const store = storeAt(path.join(makeTempDir(), 'store.sqlite'), () => now);
    put(store, 'a@x.test', personAnswer('a@x.test', 'Engineer'), 1_000);
    put(store, 'b@x.test', personAnswer('b@x.test', 'Engineer'), 1_000);
    store.flush();
    put(store, 'a@x.test', personAnswer('a@x.test', 'CTO'), 5_000);
    store.flush();
    put(store, 'a@x.test', personAnswer('a@x.test', 'VP'), 9_000);
    store.flush();
    expect(store.stats().earlierAnswers).toBe(2);
    // Older than 6 s: b's answer, and a's earlier answer of 1 000; a's of 5 000 and its current stay.
    expect(store.prune(6_000)).toBe(1);
    expect([...store.entries({ history: true })].map((e) => [e.key, e.fetchedAt])).toEqual([
      ['a@x.test', 9_000],
      ['a@x.test', 5_000],
    ]);
    now = 20_000;
    expect(store.clear()).toBe(1);
    expect(store.stats()).toMatchObject({ entries: 0, earlierAnswers: 0 });
  });

  it("grows per key only when a key's answer changes or is fetched again (measured: bytes per key)", () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const keys = Array.from({ length: 2_000 }, (_, i) => `person.${i}@company${i % 7}.com`);
    const store = storeAt(file);
    const sizeAfter = (step: (key: string) => void): number => {
      for (const key of keys) step(key);
      store.flush();
      const db = openSqliteFile(file);
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      db.close();
      return storeFileBytes(file);
    };
    const first = sizeAfter((key) => put(store, key, personAnswer(key, 'Engineer'), 1_000));
    const read = sizeAfter((key) => store.get('svc', 'lookup_email', key));
    const same = sizeAfter((key) => put(store, key, personAnswer(key, 'Engineer'), 2_000));
    const changed = sizeAfter((key) => put(store, key, personAnswer(key, 'Chief Technology Officer'), 3_000));
    const perKey = (bytes: number) => Math.round(bytes / keys.length);
    const figures = { firstAnswer: perKey(first), reread: perKey(read - first), sameAnswerAgain: perKey(same - read), changedAnswer: perKey(changed - same) };
    console.log(`store bytes per key: ${JSON.stringify(figures)}`);
    expect(read).toBe(first);
    // A check that brought the same answer: a row saying so, far less than another copy.
    expect(figures.sameAnswerAgain).toBeGreaterThan(0);
    expect(figures.sameAnswerAgain).toBeLessThan(figures.firstAnswer / 3);
    // A changed answer keeps the earlier one whole: about one answer more.
    expect(figures.changedAnswer).toBeGreaterThan(figures.firstAnswer / 2);
    expect(figures.changedAnswer).toBeLessThan(figures.firstAnswer * 1.5);
  });
});

/** What schema v9 added, taken away again (store/schema.ts): the ledger summed per day as v7 and v8 had it. */
const V9_UNDONE = `
  DROP TRIGGER ledger_total; DROP TABLE ledger_totals; DROP VIEW ledger_view;
  ALTER TABLE ledger DROP COLUMN lapsed;
  CREATE TABLE ledger_days (day INTEGER PRIMARY KEY, credits INTEGER NOT NULL, calls INTEGER NOT NULL);
  CREATE TRIGGER ledger_day AFTER INSERT ON ledger BEGIN
    INSERT INTO ledger_days (day, credits, calls) VALUES (NEW.charged_at / 86400000, NEW.credits, 1)
      ON CONFLICT (day) DO UPDATE SET credits = credits + excluded.credits, calls = calls + 1;
  END;
  CREATE VIEW ledger_view AS SELECT charged_at, service, op, credits, run_id FROM ledger;
  ALTER TABLE spend_holds DROP COLUMN service; ALTER TABLE spend_holds DROP COLUMN op;
  DROP INDEX history_unreported;
`;

describe('the upgrade to the schema with history', () => {
  it('adds the table and its trigger to a store of the schema before, rewriting none of its answers', () => {
    const file = path.join(makeTempDir(), 'old.sqlite');
    const store = ResultStore.open({ path: file });
    for (let i = 0; i < 3_000; i += 1) put(store, `p${i}@x.test`, personAnswer(`p${i}@x.test`, 'Engineer'), 1_000);
    store.close();
    // As schema v7 left it: no history table, no trigger, the ledger summed per day (v9 undone first).
    const old = openSqliteFile(file);
    old.exec(V9_UNDONE);
    old.exec('DROP TRIGGER results_history; DROP TABLE history; PRAGMA user_version = 7');
    old.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    const rowsBefore = old.rows('SELECT rowid, key, data, fetched_at FROM results ORDER BY rowid');
    // Held open, so that the upgrade's writes stay in the write-ahead log, where they can be counted.
    const upgrades: Array<[number, number, boolean]> = [];
    const upgraded = ResultStore.open({ path: file, onUpgrade: (from, to, slow) => upgrades.push([from, to, slow]) });
    opened.push(upgraded);
    expect(upgrades).toEqual([[7, SCHEMA_VERSION, false]]);
    const walBytes = fs.statSync(`${file}-wal`).size;
    expect(old.rows('SELECT rowid, key, data, fetched_at FROM results ORDER BY rowid')).toEqual(rowsBefore);
    // A few pages of schema, not the store's 3 000 answers (about 3 MB) written again.
    expect(walBytes).toBeLessThan(64 * 1024);
    expect(fs.statSync(file).size).toBeGreaterThan(1_000_000);
    old.close();
    // And the upgraded store keeps history from then on.
    put(upgraded, 'p1@x.test', personAnswer('p1@x.test', 'CTO'), 2_000);
    expect(upgraded.replaced('svc', 'lookup_email', 'p1@x.test', 2_000)).toMatchObject({ fetchedAt: 1_000, same: false });
  });
});

describe('the earlier answers read beside the current ones (store export --history, store show)', () => {
  it('each key followed by its own earlier answers, newest first, across services and operations; a key with none by none', () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const store = storeAt(file);
    const at = (service: string, op: 'lookup_email' | 'lookup_domain', key: string, title: string, fetchedAt: number) => {
      store.put(service, op, key, { found: true, data: { lead: { name: key, title } }, fetchedAt }, 'r');
      store.flush();
    };
    // Keys whose order as text differs from the order they were stored in; 0, 1 and 3 earlier answers.
    for (const service of ['svc-b', 'svc-a']) {
      at(service, 'lookup_email', 'z@x.test', 'One', 1_000);
      at(service, 'lookup_email', 'a@x.test', 'One', 1_000);
      at(service, 'lookup_email', 'a@x.test', 'Two', 2_000);
      at(service, 'lookup_domain', 'x.test', 'One', 1_000);
      at(service, 'lookup_domain', 'x.test', 'One', 2_000); // the same answer again
      at(service, 'lookup_domain', 'x.test', 'Two', 3_000);
      at(service, 'lookup_domain', 'x.test', 'Three', 4_000);
    }
    // An earlier answer whose key has no current one (left by hand): never shown under another key.
    const db = openSqliteFile(file);
    db.run(
      "INSERT INTO history (service_id, op, key, fetched_at, replaced_at, found, same, data, refused) SELECT id, 'lookup_domain', 'w.test', 1, 2, 1, 0, '{}', NULL FROM services WHERE name = 'svc-b'",
    );
    db.close();
    const listed = [...store.entries({ history: true })].map(
      (e) =>
        `${e.service} ${e.op} ${e.key} ${e.fetchedAt} ${e.replacedAt ?? '-'} ${(JSON.parse(e.data!) as { lead: { title: string } }).lead.title} ${e.change ?? '-'}`,
    );
    const ofService = (service: string) => [
      `${service} lookup_domain x.test 4000 - Three -`,
      `${service} lookup_domain x.test 3000 4000 Two not_reported`,
      `${service} lookup_domain x.test 2000 3000 One not_reported`,
      `${service} lookup_domain x.test 1000 2000 One same`,
      `${service} lookup_email a@x.test 2000 - Two -`,
      `${service} lookup_email a@x.test 1000 2000 One not_reported`,
      `${service} lookup_email z@x.test 1000 - One -`,
    ];
    // Services in the order they were first stored (their ids), as the export has always listed them.
    expect(listed).toEqual([...ofService('svc-b'), ...ofService('svc-a')]);
    expect([...store.entries({ history: true, service: 'svc-a', key: 'a@x.test' })]).toHaveLength(2);
    expect([...store.entries({ history: true, key: 'w.test' })]).toEqual([]);
  });
});

// The store's side of "Reported once, never absorbed" (store/change-report.ts): which changes a run
// with --changes carries (stored before it began, and not the work of a run still going), that one
// run at a time carries them (the report lease), and that only what a run recorded as listed is
// marked reported, and only when it says its file is in place. Runs here are ResultStore connections
// to one file and rows of its `runs` table, as the runs that share a store make them.
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreFailedError } from '../../src/api/errors.js';
import type { CarriedChange } from '../../src/core/rows.js';
import type { ChangeReport } from '../../src/store/change-report.js';
import { ResultStore } from '../../src/store/result-store.js';
import { makeTempDir } from '../helpers/files.js';
import { openSqliteFile } from '../helpers/sqlite.js';

const opened: Array<ResultStore | ChangeReport> = [];
afterEach(() => {
  for (const it of opened.splice(0).reverse()) it.close();
});

/** No process has this id (the largest a pid may be on Linux is far below it). */
const DEAD_PID = 2_147_483_647;
const SVC = 'https://api.example.test/v2';

function storeAt(file: string): ResultStore {
  const store = ResultStore.open({ path: file });
  opened.push(store);
  return store;
}

/** A store in a file of its own, and that file. */
function newStore(): { file: string; store: ResultStore } {
  const file = path.join(makeTempDir(), 'store.sqlite');
  return { file, store: storeAt(file) };
}

function reportOf(store: ResultStore, owner: string): ChangeReport {
  const report = store.changeReport(SVC, owner);
  opened.push(report);
  return report;
}

/** An answer of `key` with this title, fetched at `at` by run `run`, committed (a replaced one goes to history). */
function answer(store: ResultStore, key: string, title: string | undefined, at: number, run = 'earlier'): void {
  const data = title === undefined ? { lead: {} } : { email_address: key, lead: { name: 'Ann', title } };
  store.put(SVC, 'lookup_email', key, { found: title !== undefined, data, fetchedAt: at }, run);
  store.flush();
}

/** A run registered on the store as store-runs.ts registers one. */
function registerRun(file: string, owner: string, pid: number): void {
  const db = openSqliteFile(file);
  db.run('INSERT INTO runs (owner, pid, host, expires_at, claiming) VALUES (?, ?, ?, ?, 0)', owner, pid, os.hostname(), Date.now() + 3_600_000);
  db.close();
}

const titles = (changes: readonly CarriedChange[] | undefined) =>
  (changes ?? []).map((c) => [
    (c.data as { lead: { title?: string } }).lead.title ?? null,
    (c.dataNow as { lead: { title?: string } }).lead.title ?? null,
    c.fetchedAt,
    c.refetchedAt,
  ]);

describe('which changes a run with --changes carries', () => {
  it('those stored before it began, each with the answer that replaced it; not those stored after', () => {
    const { store } = newStore();
    answer(store, 'a@x.test', 'Engineer', 1_000);
    answer(store, 'a@x.test', 'Engineer', 2_000); // the same answer again: no change
    answer(store, 'a@x.test', 'CTO', 3_000);
    answer(store, 'a@x.test', undefined, 4_000); // left: not found
    const report = reportOf(store, 'me');
    answer(store, 'a@x.test', 'Founder', 5_000, 'me'); // this run's own
    expect(report.carries).toBe(true);
    const carried = report.take('lookup_email', 'a@x.test');
    expect(titles(carried)).toEqual([
      ['Engineer', 'CTO', 2_000, 3_000],
      ['CTO', null, 3_000, 4_000],
    ]);
    expect(carried!.map((c) => [c.found, c.foundNow, c.comparable])).toEqual([
      [true, true, true],
      [true, false, true],
    ]);
    // Taken by one row: not again, nor after the rows.
    expect(report.take('lookup_email', 'a@x.test')).toBeUndefined();
    expect([...report.rest(new Set(['lookup_email']))]).toEqual([]);
  });

  it('after the rows: the keys no row took, of the operations asked for only, in (operation, key) order', () => {
    const { store } = newStore();
    for (const key of ['c@x.test', 'a@x.test', 'b@x.test']) {
      answer(store, key, 'Engineer', 1_000);
      answer(store, key, 'CTO', 2_000);
    }
    store.put(SVC, 'lookup_domain', 'x.test', { found: true, data: { lead: { name: 'X' } }, fetchedAt: 1_000 }, 'earlier');
    store.flush();
    store.put(SVC, 'lookup_domain', 'x.test', { found: true, data: { lead: { name: 'X Holdings' } }, fetchedAt: 2_000 }, 'earlier');
    store.flush();
    const report = reportOf(store, 'me');
    report.prefetch(new Map([['lookup_email', ['b@x.test', 'z@x.test']]]));
    expect(report.take('lookup_email', 'z@x.test')).toBeUndefined();
    expect(report.take('lookup_email', 'b@x.test')).toHaveLength(1);
    expect([...report.rest(new Set(['lookup_email']))].map((changes) => changes.map((c) => c.key))).toEqual([['a@x.test'], ['c@x.test']]);
    expect([...report.rest(new Set(['lookup_email', 'lookup_domain']))].map((changes) => changes[0]!.key)).toEqual(['x.test', 'a@x.test', 'c@x.test']);
  });

  it('not a change whose answer a run still going fetched (it lists it, or leaves it); a dead run leaves its changes to be carried', () => {
    const { file, store } = newStore();
    for (const key of ['live@x.test', 'dead@x.test']) answer(store, key, 'Engineer', 1_000);
    answer(store, 'live@x.test', 'CTO', 2_000, 'run-live');
    answer(store, 'dead@x.test', 'CTO', 2_000, 'run-dead');
    registerRun(file, 'run-live', process.pid);
    registerRun(file, 'run-dead', DEAD_PID);
    const report = reportOf(store, 'me');
    expect(report.take('lookup_email', 'live@x.test')).toBeUndefined();
    expect(titles(report.take('lookup_email', 'dead@x.test'))).toEqual([['Engineer', 'CTO', 1_000, 2_000]]);
  });

  it('an answer that is not JSON, or a key the API refused: carried, but not comparable (no line; marked all the same)', () => {
    const { file, store } = newStore();
    answer(store, 'a@x.test', 'Engineer', 1_000);
    answer(store, 'a@x.test', 'CTO', 2_000);
    answer(store, 'a@x.test', 'VP', 3_000);
    store.put(SVC, 'lookup_email', 'r@x.test', { found: false, data: undefined, refused: 'malformed', fetchedAt: 1_000 }, 'earlier');
    store.flush();
    answer(store, 'r@x.test', 'CTO', 2_000);
    const db = openSqliteFile(file);
    db.run("UPDATE history SET data = '{not json' WHERE key = 'a@x.test' AND fetched_at = 2000");
    db.close();
    const report = reportOf(store, 'me');
    expect(report.take('lookup_email', 'a@x.test')!.map((c) => [c.fetchedAt, c.comparable])).toEqual([
      [1_000, false],
      [2_000, false],
    ]);
    expect(report.take('lookup_email', 'r@x.test')!.map((c) => c.comparable)).toEqual([false]);
  });
});

describe('the two sides of a carried change', () => {
  it('a live run owns the change its own fetch made, not the earlier ones of the key', () => {
    const { file, store } = newStore();
    answer(store, 'a@x.test', 'Engineer', 1_000);
    answer(store, 'a@x.test', 'CTO', 2_000);
    answer(store, 'a@x.test', 'VP', 3_000, 'run-live');
    registerRun(file, 'run-live', process.pid);
    expect(titles(reportOf(store, 'me').take('lookup_email', 'a@x.test'))).toEqual([['Engineer', 'CTO', 1_000, 2_000]]);
  });

  it('an answer without data (not found, nothing sent back) and a found one are compared both ways', () => {
    const { store } = newStore();
    const bare = (key: string, at: number) => {
      store.put(SVC, 'lookup_email', key, { found: false, data: undefined, fetchedAt: at }, 'earlier');
      store.flush();
    };
    bare('came@x.test', 1_000);
    answer(store, 'came@x.test', 'CTO', 2_000);
    answer(store, 'went@x.test', 'CTO', 1_000);
    bare('went@x.test', 2_000);
    const report = reportOf(store, 'me');
    const sides = (changes: readonly CarriedChange[] | undefined) => (changes ?? []).map((c) => [c.found, c.data, c.foundNow, c.dataNow, c.comparable]);
    const cto = (key: string) => ({ email_address: key, lead: { name: 'Ann', title: 'CTO' } });
    expect(sides(report.take('lookup_email', 'came@x.test'))).toEqual([[false, undefined, true, cto('came@x.test'), true]]);
    expect(sides(report.take('lookup_email', 'went@x.test'))).toEqual([[true, cto('went@x.test'), false, undefined, true]]);
  });

  it('a key whose current answer went while the run read it (pruned by another process): its changes carried, found now false, not comparable', () => {
    const { file, store } = newStore();
    answer(store, 'a@x.test', 'Engineer', 1_000);
    answer(store, 'a@x.test', 'CTO', 2_000);
    answer(store, 'a@x.test', 'CTO', 3_000); // checked again: the same answer, kept as "the same as the next"
    answer(store, 'b@x.test', 'Engineer', 1_000);
    answer(store, 'b@x.test', 'CTO', 2_000);
    const db = openSqliteFile(file);
    db.run("DELETE FROM results WHERE key IN ('a@x.test', 'b@x.test')");
    db.close();
    const report = reportOf(store, 'me');
    // The answer that replaced Engineer is known only as "the same as the next", which is gone:
    // carried (and so marked), but nothing to compare it with, not a change to blanks.
    expect(report.take('lookup_email', 'a@x.test')!.map((c) => [c.fetchedAt, c.refetchedAt, c.found, c.foundNow, c.comparable, c.dataNow])).toEqual([
      [1_000, 2_000, true, true, false, undefined],
    ]);
    // The answer that replaced Engineer is itself gone: nothing now.
    expect(report.take('lookup_email', 'b@x.test')!.map((c) => [c.fetchedAt, c.found, c.foundNow, c.comparable, c.data, c.dataNow])).toEqual([
      [1_000, true, false, false, undefined, undefined],
    ]);
  });

  it('a current answer the API refused: the change to it carried, not comparable, found now false', () => {
    const { store } = newStore();
    answer(store, 'a@x.test', 'CTO', 1_000);
    store.put(SVC, 'lookup_email', 'a@x.test', { found: false, data: undefined, refused: 'malformed', fetchedAt: 2_000 }, 'earlier');
    store.flush();
    const report = reportOf(store, 'me');
    expect(report.take('lookup_email', 'a@x.test')!.map((c) => [c.found, c.foundNow, c.comparable, c.data, c.dataNow])).toEqual([
      [true, false, false, undefined, undefined],
    ]);
  });
});

describe('what is marked reported', () => {
  it('only what the run recorded as listed, and only once it says its file is in place', () => {
    const { file, store } = newStore();
    for (const key of ['a@x.test', 'b@x.test']) {
      answer(store, key, 'Engineer', 1_000);
      answer(store, key, 'CTO', 2_000);
    }
    // A run that listed one and died before its file was complete: nothing marked.
    const dying = reportOf(store, 'dying');
    dying.listed('lookup_email', 'a@x.test', 2_000);
    dying.close();
    const next = reportOf(store, 'next');
    expect([...next.rest(new Set(['lookup_email']))].map((changes) => changes[0]!.key)).toEqual(['a@x.test', 'b@x.test']);
    next.listed('lookup_email', 'a@x.test', 2_000);
    // A time no change has: nothing to mark.
    next.listed('lookup_email', 'b@x.test', 1_500);
    expect(next.markReported()).toBe(1);
    next.close();
    const last = reportOf(store, 'last');
    expect([...last.rest(new Set(['lookup_email']))].map((changes) => changes[0]!.key)).toEqual(['b@x.test']);
  });
});

describe('two runs with --changes at once on one store', () => {
  it('one carries the earlier changes (it holds the lease); the other lists its own only; a dead holder holds nothing', () => {
    const { file, store } = newStore();
    answer(store, 'a@x.test', 'Engineer', 1_000);
    answer(store, 'a@x.test', 'CTO', 2_000);
    const first = reportOf(store, 'first');
    const second = reportOf(storeAt(file), 'second');
    expect(first.carries).toBe(true);
    expect(second.carries).toBe(false);
    expect(second.holder).toEqual({ pid: process.pid, host: os.hostname() });
    expect(second.take('lookup_email', 'a@x.test')).toBeUndefined();
    expect([...second.rest(new Set(['lookup_email']))]).toEqual([]);
    first.close();
    expect(reportOf(storeAt(file), 'third').carries).toBe(true);
    // The holder's process is gone (killed): its lease holds nothing.
    const db = openSqliteFile(file);
    db.run("UPDATE claims SET pid = ?, owner = 'killed' WHERE op = 'report_changes'", DEAD_PID);
    db.close();
    expect(reportOf(storeAt(file), 'fourth').carries).toBe(true);
  });

  it('every change is listed by exactly one of them, and marked once: carried by the holder, or by the run that stored it', () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const [one, two] = [storeAt(file), storeAt(file)];
    for (const key of ['a@x.test', 'b@x.test']) answer(one, key, 'Engineer', 1_000);
    answer(one, 'a@x.test', 'CTO', 2_000); // stored by a run without --changes
    const listedBy = new Map<string, string[]>();
    const list = (report: ChangeReport, name: string, key: string, at: number) => {
      report.listed('lookup_email', key, at);
      listedBy.set(`${key}@${at}`, [...(listedBy.get(`${key}@${at}`) ?? []), name]);
    };
    const holder = reportOf(one, 'holder');
    registerRun(file, 'other', process.pid);
    const other = reportOf(two, 'other');
    // The other run looks b up again (its own change), and a too (its own change after the carried one).
    answer(two, 'b@x.test', 'CTO', 3_000, 'other');
    answer(two, 'a@x.test', 'VP', 3_000, 'other');
    list(other, 'other', 'b@x.test', 3_000);
    list(other, 'other', 'a@x.test', 3_000);
    for (const change of holder.take('lookup_email', 'a@x.test') ?? []) list(holder, 'holder', change.key, change.refetchedAt);
    expect(holder.take('lookup_email', 'b@x.test')).toBeUndefined();
    holder.markReported();
    holder.close();
    // A run that begins while the other is still going carries none of its changes.
    const late = reportOf(storeAt(file), 'late');
    expect(late.carries).toBe(true);
    expect([...late.rest(new Set(['lookup_email']))]).toEqual([]);
    other.markReported();
    expect(Object.fromEntries(listedBy)).toEqual({ 'a@x.test@2000': ['holder'], 'a@x.test@3000': ['other'], 'b@x.test@3000': ['other'] });
    const db = openSqliteFile(file);
    expect(db.rows('SELECT key, replaced_at, reported FROM history ORDER BY key, replaced_at')).toEqual([
      ['a@x.test', 2_000, 1],
      ['a@x.test', 3_000, 1],
      ['b@x.test', 3_000, 1],
    ]);
    db.close();
  });
});

describe('the report lease', () => {
  const T = Date.parse('2026-03-14T02:00:00Z');
  const DAY = 86_400_000;

  function clockedStore(file: string, clock: { now: number }): ResultStore {
    const store = ResultStore.open({ path: file, now: () => clock.now });
    opened.push(store);
    return store;
  }

  it('lasts a day from when it was taken, unless its process is gone: at its deadline it still holds, a millisecond after it does not', () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const clock = { now: T };
    const store = clockedStore(file, clock);
    answer(store, 'a@x.test', 'Engineer', 1_000);
    reportOf(store, 'holder');
    clock.now = T + DAY;
    expect(reportOf(clockedStore(file, clock), 'at-the-deadline').carries).toBe(false);
    clock.now = T + DAY + 1;
    expect(reportOf(clockedStore(file, clock), 'after-it').carries).toBe(true);
  });

  it("another host's holder is judged by its deadline only: its pid means nothing here", () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const clock = { now: T };
    const store = clockedStore(file, clock);
    answer(store, 'a@x.test', 'Engineer', 1_000);
    answer(store, 'a@x.test', 'CTO', 2_000, 'elsewhere');
    const db = openSqliteFile(file);
    db.run(
      "INSERT INTO claims (service, op, key, owner, pid, host, expires_at) VALUES (?, 'report_changes', '', 'far', ?, 'another-host', ?)",
      SVC,
      DEAD_PID,
      T + DAY,
    );
    db.close();
    expect(reportOf(store, 'here').holder).toEqual({ pid: DEAD_PID, host: 'another-host' });
  });

  it('a run of another host still going keeps its changes, whatever its pid is here; one whose lease ran out leaves them', () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const clock = { now: T };
    const store = clockedStore(file, clock);
    for (const key of ['going@x.test', 'stopped@x.test']) answer(store, key, 'Engineer', 1_000);
    answer(store, 'going@x.test', 'CTO', 2_000, 'run-going');
    answer(store, 'stopped@x.test', 'CTO', 2_000, 'run-stopped');
    const db = openSqliteFile(file);
    const register = (owner: string, expiresAt: number) =>
      db.run("INSERT INTO runs (owner, pid, host, expires_at, claiming) VALUES (?, ?, 'another-host', ?, 0)", owner, DEAD_PID, expiresAt);
    register('run-going', T);
    register('run-stopped', T - 1);
    db.close();
    const report = reportOf(store, 'me');
    expect(report.take('lookup_email', 'going@x.test')).toBeUndefined();
    expect(titles(report.take('lookup_email', 'stopped@x.test'))).toEqual([['Engineer', 'CTO', 1_000, 2_000]]);
  });

  it('a run that takes it again (its own row) holds it', () => {
    const { file, store } = newStore();
    answer(store, 'a@x.test', 'Engineer', 1_000);
    answer(store, 'a@x.test', 'CTO', 2_000);
    reportOf(store, 'me');
    expect(reportOf(storeAt(file), 'me').carries).toBe(true);
  });
});

describe('marking twice', () => {
  it('a change another run marked meanwhile is not counted again', () => {
    const { file, store } = newStore();
    answer(store, 'a@x.test', 'Engineer', 1_000);
    answer(store, 'a@x.test', 'CTO', 2_000);
    const first = reportOf(store, 'first');
    const second = reportOf(storeAt(file), 'second');
    first.listed('lookup_email', 'a@x.test', 2_000);
    second.listed('lookup_email', 'a@x.test', 2_000);
    expect(first.markReported()).toBe(1);
    expect(second.markReported()).toBe(0);
  });
});

describe('a store with no answers of the service', () => {
  it('carries nothing (and reads nothing for it)', () => {
    const { store } = newStore();
    const report = reportOf(store, 'me');
    expect(report.holder).toBeUndefined();
    expect(report.carries).toBe(false);
    report.prefetch(new Map([['lookup_email', ['a@x.test']]]));
    expect(report.take('lookup_email', 'a@x.test')).toBeUndefined();
    expect([...report.rest(new Set(['lookup_email']))]).toEqual([]);
  });
});

describe('a report whose store cannot be written', () => {
  it('a listing or the marking fails as the store does: one line naming the file, its cause kept', () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const store = ResultStore.open({ path: file });
    answer(store, 'a@x.test', 'Engineer', 1_000);
    answer(store, 'a@x.test', 'CTO', 2_000);
    const report = store.changeReport(SVC, 'me');
    store.close();
    expect(() => report.listed('lookup_email', 'a@x.test', 2_000)).toThrow(StoreFailedError);
    expect(() => report.listed('lookup_email', 'a@x.test', 2_000)).toThrow(`The result store at ${file} could not be written`);
    expect(() => report.markReported()).toThrow(StoreFailedError);
    expect(() => report.markReported()).toThrow(`The result store at ${file} could not be written`);
  });
});

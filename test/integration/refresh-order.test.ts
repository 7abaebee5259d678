// When a night's budget cannot refresh every stale answer, the oldest go first (run/refresh-order.ts),
// so a budget smaller than the refreshes a month needs takes every key in its turn over the nights,
// not the file's first rows every time. In process: enrich() on a file against the sandbox; the
// stored answers' ages set in the store file, each its own.
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrich } from '../../src/run/enrich.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { ResultStore } from '../../src/store/result-store.js';
import { makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';
import { openSqliteFile } from '../helpers/sqlite.js';

let s: Sandbox;
beforeAll(async () => {
  s = await startSandbox({ port: 0, rpm: 60_000, notFoundRate: 0 });
});
afterAll(() => s.close());

const DAY = 86_400_000;
const EMAILS = Array.from({ length: 12 }, (_, i) => `order.${i}@company${i % 3}.com`);
/** How many days ago each row's answer was fetched: the oldest are in the middle of the file. */
const AGES = [31, 32, 33, 34, 70, 69, 68, 67, 50, 49, 48, 47];

/** Sets each stored answer's fetch time to `days` before `now` (the store's file, as another process would). */
function ageAnswers(store: string, days: ReadonlyArray<readonly [key: string, days: number]>, now = Date.now()): number {
  const db = openSqliteFile(store);
  for (const [key, d] of days) db.run('UPDATE results SET fetched_at = ? WHERE key = ?', now - d * DAY, key);
  db.close();
  return now;
}

describe('a budget that cannot refresh every stale answer tonight', () => {
  it('refreshes the oldest first; the next night the next oldest; the rest are written stale (budget)', async () => {
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...EMAILS.map((e) => [e])]);
    const store = path.join(dir, 'store.sqlite');
    const output = path.join(dir, 'out.csv');
    const options = { input, output, store, baseUrl: s.baseUrl, token: s.token };
    await enrich(options);
    ageAnswers(
      store,
      EMAILS.map((email, i) => [email, AGES[i]!]),
    );

    // 16 credits: three lookups of 4, the last with room for a hold of 8. One at a time: no hold of another call in the way.
    const night = async () => {
      const summary = await enrich({ ...options, budget: 16, concurrency: 1 });
      const rows = readCsvObjects(output);
      return {
        summary,
        refreshed: rows.flatMap((row, i) => (row.lead_billing === 'charged' ? [i] : [])),
        stale: rows.filter((row) => row.lead_billing === 'stale').length,
        blank: rows.filter((row) => row.lead_status !== 'found').length,
      };
    };
    const first = await night();
    expect(first.refreshed).toEqual([4, 5, 6]);
    expect({ stale: first.stale, blank: first.blank }).toEqual({ stale: 9, blank: 0 });
    expect(first.summary).toMatchObject({ stoppedBy: 'budget', stale: { rows: 9, reasons: { budget: 9 } } });
    const second = await night();
    expect(second.refreshed).toEqual([7, 8, 9]);
    const third = await night();
    expect(third.refreshed).toEqual([3, 10, 11]);
  });

  // The keys with no answer first: a stale answer is better than none.
  for (const { fresh, refreshed, line } of [
    { fresh: 2, refreshed: [4], line: 'fetched after' },
    { fresh: 3, refreshed: [], line: 'then no answer older than maxAge is looked up again' },
  ]) {
    it(`${fresh} keys with no answer take ${fresh} of the 3 lookups 16 credits pay for; the oldest stale answers the rest`, async () => {
      const dir = makeTempDir();
      const stored = EMAILS.slice(0, 6);
      const store = path.join(dir, 'store.sqlite');
      const output = path.join(dir, 'out.csv');
      const first = writeCsv(path.join(dir, 'first.csv'), [['email'], ...stored.map((e) => [e])]);
      await enrich({ input: first, output, store, baseUrl: s.baseUrl, token: s.token });
      ageAnswers(
        store,
        stored.map((email, i) => [email, AGES[i]!]),
      );
      const newKeys = Array.from({ length: fresh }, (_, i) => `new.${i}@company${i}.com`);
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...stored.map((e) => [e]), ...newKeys.map((e) => [e])]);
      const notices: string[] = [];
      await enrich({ input, output, store, baseUrl: s.baseUrl, token: s.token, budget: 16, concurrency: 1, onNotice: (l: string) => notices.push(l) });
      const rows = readCsvObjects(output);
      expect(rows.flatMap((row, i) => (row.lead_billing === 'charged' && i < stored.length ? [i] : []))).toEqual(refreshed);
      expect(rows.slice(stored.length).map((row) => row.lead_status)).toEqual(newKeys.map(() => 'found'));
      expect(notices.filter((l) => l.startsWith('the budgets cannot pay for every refresh this run needs: the keys with no answer first, then '))).toEqual([
        expect.stringContaining(line),
      ]);
    });
  }

  it('only found answers older than --max-age wait for their turn: young ones and misses take no place', async () => {
    const dir = makeTempDir();
    // Three found and stale (40 to 42 days), three found and young (a day), three stored as not found long ago.
    const [stale, young, missed] = [EMAILS.slice(0, 3), EMAILS.slice(3, 6), EMAILS.slice(6, 9)];
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...[...stale, ...young, ...missed].map((e) => [e])]);
    const store = path.join(dir, 'store.sqlite');
    const output = path.join(dir, 'out.csv');
    const options = { input, output, store, baseUrl: s.baseUrl, token: s.token };
    await enrich(options);
    const db = openSqliteFile(store);
    const now = Date.now();
    for (const [i, email] of stale.entries()) db.run('UPDATE results SET fetched_at = ? WHERE key = ?', now - (40 + i) * DAY, email);
    for (const email of young) db.run('UPDATE results SET fetched_at = ? WHERE key = ?', now - DAY, email);
    for (const [i, email] of missed.entries()) db.run('UPDATE results SET fetched_at = ?, found = 0, data = NULL WHERE key = ?', now - (60 + i) * DAY, email);
    db.close();
    const notices: string[] = [];
    // 16 credits: the three stale found answers, and nothing more, wait for a lookup: they all have one.
    await enrich({ ...options, budget: 16, concurrency: 1, onNotice: (l: string) => notices.push(l) });
    expect(notices.filter((l) => l.startsWith('the budgets cannot pay for every refresh'))).toEqual([]);
    expect(
      readCsvObjects(output)
        .map((row) => row.lead_billing)
        .slice(0, 6),
    ).toEqual(['charged', 'charged', 'charged', 'cached', 'cached', 'cached']);
  });

  it('reads the file as the run does (its lines to skip, its delimiter, the key column named), and only the rows it looks up', async () => {
    const dir = makeTempDir();
    const input = path.join(dir, 'in.csv');
    // A title line to skip; another column of emails before the one named; a row with no key; a
    // row whose Title --fill has nothing to fill (complete: not looked up) with the oldest answer.
    const emails = EMAILS.slice(0, 6);
    const rows = emails.map((email, i) => `person ${i};x${i}@not-this.com;${email};${i === 0 ? 'Director' : ''}`);
    writeFileSync(input, `Contacts export\nName;Other;Contact;Title\n${rows.join('\n')}\nnobody;;;\n`);
    const store = path.join(dir, 'store.sqlite');
    const output = path.join(dir, 'out.csv');
    const options = {
      input,
      output,
      store,
      baseUrl: s.baseUrl,
      token: s.token,
      skipLines: 1,
      delimiter: ';',
      column: 'Contact',
      by: 'email' as const,
      fill: 'Title=lead_title',
    };
    await enrich({ ...options, fill: undefined });
    const ages = [80, 60, 40, 41, 42, 43];
    const now = ageAnswers(
      store,
      emails.map((email, i) => [email, ages[i]!]),
    );
    await enrich({ ...options, budget: 8, concurrency: 1 });
    // One lookup: the oldest of the rows looked up, the file's second (60 days); the first is complete.
    const after = openSqliteFile(store);
    const fresh = after.rows('SELECT key FROM results WHERE fetched_at > ?', now - DAY).map((row) => row[0]);
    after.close();
    expect(fresh).toEqual([emails[1]]);
  });

  it('--limit: the rows past it take no place, however many new keys they hold', async () => {
    const dir = makeTempDir();
    const stored = EMAILS.slice(0, 4);
    const store = path.join(dir, 'store.sqlite');
    const output = path.join(dir, 'out.csv');
    await enrich({ input: writeCsv(path.join(dir, 'first.csv'), [['email'], ...stored.map((e) => [e])]), output, store, baseUrl: s.baseUrl, token: s.token });
    ageAnswers(
      store,
      stored.map((email, i) => [email, 40 + i * 10]),
    );
    const past = Array.from({ length: 3 }, (_, i) => [`past.limit.${i}@company${i}.com`]);
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...stored.map((e) => [e]), ...past]);
    // 8 credits: one lookup, the oldest of the four rows read (70 days), not a key past the limit.
    await enrich({ input, output, store, baseUrl: s.baseUrl, token: s.token, limit: stored.length, budget: 8, concurrency: 1 });
    expect(readCsvObjects(output).map((row) => row.lead_billing)).toEqual(['stale', 'stale', 'stale', 'charged']);
  });

  it('an answer exactly --max-age old is fresh to the order as to the run: it takes no place, and nothing waits', async () => {
    const dir = makeTempDir();
    const [atBound, old] = EMAILS.slice(0, 2);
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], [atBound!], [old!]]);
    const file = path.join(dir, 'store.sqlite');
    const output = path.join(dir, 'out.csv');
    const options = { input, output, baseUrl: s.baseUrl, token: s.token };
    await enrich({ ...options, store: file });
    const now = Date.now();
    ageAnswers(
      file,
      [
        [atBound!, 30],
        [old!, 50],
      ],
      now,
    );
    // The run's clock stands still at `now`: the first answer is exactly 30 days old as it begins.
    const store = ResultStore.open({ path: file, now: () => now });
    const notices: string[] = [];
    try {
      // 8 credits: one lookup, which the one stale answer takes; with the other counted stale too, one would wait.
      await enrich({ ...options, store, maxAge: '30d', budget: 8, concurrency: 1, onNotice: (l: string) => notices.push(l) });
    } finally {
      store.close();
    }
    expect(readCsvObjects(output).map((row) => row.lead_billing)).toEqual(['cached', 'charged']);
    expect(notices.filter((l) => l.startsWith('the budgets cannot pay for every refresh'))).toEqual([]);
  });

  it('reads past its first batch: the oldest answer far down the file still goes first', async () => {
    const dir = makeTempDir();
    const [younger, older] = EMAILS.slice(0, 2);
    const store = path.join(dir, 'store.sqlite');
    const output = path.join(dir, 'out.csv');
    await enrich({ input: writeCsv(path.join(dir, 'first.csv'), [['email'], [younger!], [older!]]), output, store, baseUrl: s.baseUrl, token: s.token });
    ageAnswers(store, [
      [younger!, 40],
      [older!, 70],
    ]);
    // Two thousand rows with no key (several batches of the reader) before the two stale answers.
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['email', 'note'],
      ...Array.from({ length: 2_000 }, (_, i) => ['', `no key ${i}`]),
      [younger!, ''],
      [older!, ''],
    ]);
    // 8 credits: one lookup, the older answer's, though the younger comes first in the file.
    await enrich({ input, output, store, baseUrl: s.baseUrl, token: s.token, budget: 8, concurrency: 1 });
    expect(
      readCsvObjects(output)
        .slice(-2)
        .map((row) => row.lead_billing),
    ).toEqual(['stale', 'charged']);
  });

  it('a file whose first line is a key: read as data by the pass too, and the run says so once', async () => {
    const dir = makeTempDir();
    const stored = EMAILS.slice(0, 3);
    const store = path.join(dir, 'store.sqlite');
    const output = path.join(dir, 'out.csv');
    const input = path.join(dir, 'in.csv');
    writeFileSync(input, `${stored.join('\n')}\n`);
    await enrich({ input, output, store, baseUrl: s.baseUrl, token: s.token });
    ageAnswers(
      store,
      stored.map((email, i) => [email, 40 + i * 10]),
    );
    const warnings: string[] = [];
    await enrich({ input, output, store, baseUrl: s.baseUrl, token: s.token, budget: 8, concurrency: 1, onWarning: (l: string) => warnings.push(l) });
    expect(warnings.filter((l) => l.includes('a key, not a column name'))).toHaveLength(1);
    // One lookup: the oldest, the file's last line.
    const billing = readFileSync(output, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(',').at(-1));
    expect(billing).toEqual(['stale', 'stale', 'charged']);
  });

  // Linux only: it reads /proc/self/fd, which other systems lack (its skipReason says so).
  it.runIf(process.platform === 'linux')(
    'its reading of the file, stopped early by the new keys, leaves the file closed',
    { meta: { skipReason: 'reads /proc/self/fd (Linux)' } },
    async () => {
      const dir = makeTempDir();
      const store = path.join(dir, 'store.sqlite');
      const output = path.join(dir, 'out.csv');
      await enrich({ input: writeCsv(path.join(dir, 'first.csv'), [['email'], [EMAILS[0]!]]), output, store, baseUrl: s.baseUrl, token: s.token });
      const db = openSqliteFile(store);
      db.run('UPDATE results SET fetched_at = fetched_at - ?', 40 * DAY);
      db.close();
      // Far more than one batch of new keys after the stale one: the pass stops at its first batch.
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], [EMAILS[0]!], ...Array.from({ length: 6_000 }, (_, i) => [`new.${i}@company${i % 7}.com`])]);
      await enrich({ input, output, store, baseUrl: s.baseUrl, token: s.token, budget: 8, concurrency: 1 });
      const open = readdirSync('/proc/self/fd').flatMap((fd) => {
        try {
          return [readlinkSync(`/proc/self/fd/${fd}`)];
        } catch {
          return [];
        }
      });
      expect(open.filter((target) => target === input)).toEqual([]);
    },
  );

  it('a budget that pays for every refresh: nothing waits, the file in its order', async () => {
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...EMAILS.slice(0, 4).map((e) => [e])]);
    const store = path.join(dir, 'store.sqlite');
    const output = path.join(dir, 'out.csv');
    const options = { input, output, store, baseUrl: s.baseUrl, token: s.token };
    await enrich(options);
    const db = openSqliteFile(store);
    db.run('UPDATE results SET fetched_at = fetched_at - ?', 40 * DAY);
    db.close();
    const summary = await enrich({ ...options, budget: 100 });
    expect(readCsvObjects(output).map((row) => row.lead_billing)).toEqual(['charged', 'charged', 'charged', 'charged']);
    expect(summary).toMatchObject({ stoppedBy: undefined, stale: { rows: 0 } });
  });
});

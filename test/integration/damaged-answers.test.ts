// A stored answer, or an earlier answer in history, whose data is not JSON (a file edited or
// damaged by hand: `store check` names it and calls the store sound, "a run looks it up again").
// A run looks such a key up again and goes on: never a failed run. What it answered before cannot
// be known, so the new answer is compared with nothing (no change; docs/cli-contract.md, "What
// changed since the last answer"), and a change from or to it is no line of --changes.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { enrich } from '../../src/run/enrich.js';
import { ResultStore } from '../../src/store/result-store.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';
import { openSqliteFile } from '../helpers/sqlite.js';

const sandbox = sandboxesPerTest();
const DAY = 86_400_000;

/** Changes the store file as a person with the sqlite3 shell would. */
function edit(store: string, ...statements: Array<[string, ...Array<string | number>]>): void {
  const db = openSqliteFile(store);
  for (const [sql, ...params] of statements) db.run(sql, ...params);
  db.close();
}

describe('a stored answer that is not JSON', () => {
  it('a --max-age run looks the key up again and goes on, the key met again later in the file too: no change, nothing failed', async () => {
    const s = await sandbox({ drift: 0.3 });
    // The damaged key at the first row and the last, in different batches of the reader (512
    // records a batch). With two lookups at a time, the reader waits for the first answers before
    // it reads on (64 rows wait at most): the last row then finds the key's new answer stored, and
    // reads what it replaced (history) to be compared as the first row was.
    const people = emails(100);
    const damaged = people[0]!;
    const dir = makeTempDir();
    const store = path.join(dir, 'store.sqlite');
    const blank = Array.from({ length: 450 }, (_, i) => ['', `nobody ${i}`]);
    const input = writeCsv(path.join(dir, 'in.csv'), [['email', 'name'], ...people.map((e) => [e, 'x']), ...blank, [damaged, 'x']]);
    const options = { input, baseUrl: s.baseUrl, token: s.token, store };
    await enrich({ ...options, output: path.join(dir, 'one.csv') });
    edit(store, ["UPDATE results SET data = '{not json' WHERE key = ?", damaged], ['UPDATE results SET fetched_at = fetched_at - ?', DAY]);
    s.nextDay();
    const lookups = s.stats.byOperation.lookup_email!;
    const summary = await enrich({ ...options, output: path.join(dir, 'two.csv'), maxAge: '1h', changes: path.join(dir, 'changes.csv'), concurrency: 2 });
    // Every key once: the damaged one too, its second row a duplicate of the first.
    expect(s.stats.byOperation.lookup_email! - lookups).toBe(people.length);
    const rows = readCsvObjects(path.join(dir, 'two.csv'));
    expect(rows).toHaveLength(551);
    expect([rows[0]!.lead_billing, rows.at(-1)!.lead_billing]).toEqual(['charged', 'duplicate']);
    expect(rows.at(-1)!.lead_name).toBe(rows[0]!.lead_name);
    expect(rows.at(-1)!.lead_name).not.toBe('');
    // Both rows of the damaged key compared with nothing; every other row with its answer of yesterday.
    expect(summary.changed.compared).toBe(people.length - 1);
    expect(readCsvObjects(path.join(dir, 'changes.csv')).filter((line) => line.key === damaged)).toEqual([]);
    expect([rows[0]!.lead_changed, rows.at(-1)!.lead_changed]).toEqual(['', '']);
    // The change from the damaged answer is no line of a later run either; it is marked, not carried for ever.
    await enrich({ ...options, output: path.join(dir, 'three.csv'), changes: path.join(dir, 'changes3.csv') });
    expect(readCsvObjects(path.join(dir, 'changes3.csv'))).toEqual([]);
    const opened = ResultStore.open({ path: store, readonly: true });
    expect([...opened.entries({ key: damaged, history: true })].map((e) => [e.data === '{not json', e.change])).toEqual([
      [false, undefined],
      [true, 'reported'],
      // The edit above that dated the answer a day back: the trigger kept it as a check that brought the same answer.
      [true, 'same'],
    ]);
    opened.close();
  });
});

describe('an earlier answer in history that is not JSON', () => {
  it('a run with --changes lists no line for the change from it, lists the others, and goes on', async () => {
    const s = await sandbox({ drift: 0.5 });
    const people = emails(40);
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...people.map((e) => [e])]);
    const store = path.join(dir, 'store.sqlite');
    const options = { input, baseUrl: s.baseUrl, token: s.token, store };
    await enrich({ ...options, output: path.join(dir, 'one.csv') });
    s.nextDay();
    await enrich({ ...options, output: path.join(dir, 'two.csv'), refresh: true });
    const [one, two] = [readCsvObjects(path.join(dir, 'one.csv')), readCsvObjects(path.join(dir, 'two.csv'))];
    const moved = people.filter((_, i) => one[i]!.lead_title !== two[i]!.lead_title && one[i]!.lead_status === 'found' && two[i]!.lead_status === 'found');
    expect(moved.length).toBeGreaterThan(2);
    edit(store, ["UPDATE history SET data = '[broken' WHERE key = ?", moved[0]!]);
    // Each key twice: its changes are listed at its first row.
    writeCsv(input, [['email'], ...people.map((e) => [e]), ...people.map((e) => [e])]);
    const summary = await enrich({ ...options, output: path.join(dir, 'three.csv'), changes: path.join(dir, 'changes.csv') });
    const listed = readCsvObjects(path.join(dir, 'changes.csv'));
    expect(listed.every((line) => Number(line.row) <= people.length)).toBe(true);
    const keys = new Set(listed.map((line) => line.key));
    expect(keys.has(moved[0]!)).toBe(false);
    for (const key of moved.slice(1)) expect(keys.has(key)).toBe(true);
    expect(summary.status.found + summary.status.not_found).toBe(2 * people.length);
  });
});

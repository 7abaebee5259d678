// Reported once, never absorbed (docs/cli-contract.md, "What changed since the last answer"): a
// change is listed by the first run with --changes after it was stored, whichever run stored it
// (a refresh without --changes, a run that failed before its file was complete), at the row where
// its key stands or with an empty row, once; a run without --changes marks nothing. The library's
// enrich() runs here in-process against the sandbox (its drift makes people change jobs), and what
// changed is worked out from the enriched outputs of the runs that stored the answers.
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { enrich } from '../../src/run/enrich.js';
import { ResultStore } from '../../src/store/result-store.js';
import { answerCells, ownColumnNames } from '../../src/write/columns.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';
import { accountOnlyServer } from '../helpers/servers.js';

const sandbox = sandboxesPerTest();
const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

type Line = { row: string; key: string; field: string; before: string; after: string };
const ANSWER_COLUMN = (name: string) => name.startsWith('lead_') && !['lead_status', 'lead_billing', 'lead_changed'].includes(name);

/** The changes between two enriched outputs of the same keys, key by key, as a --changes file words them (`row` left to the caller). */
function changesBetween(before: Array<Record<string, string>>, after: Array<Record<string, string>>): Map<string, Array<Omit<Line, 'row'>>> {
  const byKey = new Map<string, Array<Omit<Line, 'row'>>>();
  after.forEach((now, i) => {
    const then = before[i]!;
    const key = now.email!;
    const lines =
      then.lead_status !== now.lead_status
        ? [{ key, field: 'status', before: then.lead_status!, after: now.lead_status! }]
        : Object.keys(now)
            .filter((name) => ANSWER_COLUMN(name) && then[name] !== now[name])
            .map((field) => ({ key, field, before: then[field]!, after: now[field]! }));
    if (lines.length > 0) byKey.set(key, lines);
  });
  return byKey;
}

const linesOf = (file: string): Line[] =>
  readCsvObjects(file).map(({ row, key, field, before, after }) => ({ row: row!, key: key!, field: field!, before: before!, after: after! }));

/** A file of contacts, a store, and enrich() on them against the sandbox `s`. */
function setUp(s: { baseUrl: string; token: string }, people: string[]) {
  const dir = makeTempDir();
  const file = (name: string) => path.join(dir, name);
  const input = writeCsv(file('in.csv'), [['email'], ...people.map((e) => [e])]);
  const store = file('store.sqlite');
  const run = (output: string, more: Parameters<typeof enrich>[0] extends infer O ? Partial<O> : never = {}) =>
    enrich({ input, output: file(output), baseUrl: s.baseUrl, token: s.token, store, ...more });
  return { dir, file, input, store, run };
}

describe('changes stored by a run without --changes', () => {
  it('are listed by the next run with --changes, once, at the rows of their keys; the run after lists none of them', async () => {
    const s = await sandbox({ drift: 0.3 });
    const people = emails(60);
    const { file, run } = setUp(s, people);
    await run('one.csv');
    s.nextDay();
    // The other cron line: a refresh without --changes.
    const refresh = await run('two.csv', { refresh: true });
    expect(refresh.carriedOver).toEqual({ keys: 0, lines: 0, keysNotInFile: 0 });
    const changed = changesBetween(readCsvObjects(file('one.csv')), readCsvObjects(file('two.csv')));
    expect(changed.size).toBeGreaterThan(5);

    const listing = await run('three.csv', { changes: file('changes.csv') });
    const expected = people.flatMap((key, i) => (changed.get(key) ?? []).map((line) => ({ row: String(i + 1), ...line })));
    expect(linesOf(file('changes.csv'))).toEqual(expected);
    // Nothing was looked up again: this run's own comparisons are none, the carried ones counted apart.
    expect(listing.changed).toEqual({ compared: 0, rows: 0, fields: {} });
    expect(listing.carriedOver).toEqual({ keys: changed.size, lines: expected.length, keysNotInFile: 0 });
    expect(listing.billing.cached).toBe(people.length);
    // lead_changed names what this run's lookups found: none.
    expect(readCsvObjects(file('three.csv')).every((row) => row.lead_changed === '')).toBe(true);

    const again = await run('four.csv', { changes: file('changes4.csv') });
    expect(linesOf(file('changes4.csv'))).toEqual([]);
    expect(again.carriedOver).toEqual({ keys: 0, lines: 0, keysNotInFile: 0 });
  });

  it('a key not in the file of the run with --changes: listed after the rows, with an empty row', async () => {
    const s = await sandbox({ drift: 0.3 });
    const people = emails(60);
    const { file, run, input } = setUp(s, people);
    await run('one.csv');
    s.nextDay();
    await run('two.csv', { refresh: true });
    const changed = changesBetween(readCsvObjects(file('one.csv')), readCsvObjects(file('two.csv')));
    // The file of the run with --changes: the first 20 contacts only.
    writeCsv(input, [['email'], ...people.slice(0, 20).map((e) => [e])]);
    const summary = await run('three.csv', { changes: file('changes.csv') });
    const inFile = people.slice(0, 20).flatMap((key, i) => (changed.get(key) ?? []).map((line) => ({ row: String(i + 1), ...line })));
    // After the rows, in key order (as text).
    const outside = [...changed.keys()].filter((key) => !people.slice(0, 20).includes(key)).sort();
    const after = outside.flatMap((key) => changed.get(key)!.map((line) => ({ row: '', ...line })));
    expect(outside.length).toBeGreaterThan(0);
    expect(linesOf(file('changes.csv'))).toEqual([...inFile, ...after]);
    expect(summary.carriedOver).toEqual({ keys: changed.size, lines: inFile.length + after.length, keysNotInFile: outside.length });
    // Listed once: the whole file after them lists none again.
    writeCsv(input, [['email'], ...people.map((e) => [e])]);
    await run('four.csv', { changes: file('changes4.csv') });
    expect(linesOf(file('changes4.csv'))).toEqual([]);
  });

  it('a key changed twice before a run with --changes: each change once, in order, with its fetch times', async () => {
    const s = await sandbox({ drift: 0.5 });
    const people = emails(60);
    const { file, run } = setUp(s, people);
    await run('e0.csv');
    s.nextDay();
    await run('e1.csv', { refresh: true });
    s.nextDay();
    await run('e2.csv', { refresh: true });
    const [e0, e1, e2] = ['e0.csv', 'e1.csv', 'e2.csv'].map((name) => readCsvObjects(file(name)));
    const first = changesBetween(e0!, e1!);
    const second = changesBetween(e1!, e2!);
    const twice = people.filter((key) => first.has(key) && second.has(key));
    expect(twice.length).toBeGreaterThan(0);
    await run('three.csv', { changes: file('changes.csv') });
    const all = readCsvObjects(file('changes.csv'));
    expect(all.map(({ row, key, field, before, after }) => ({ row, key, field, before, after }))).toEqual(
      people.flatMap((key, i) => [...(first.get(key) ?? []), ...(second.get(key) ?? [])].map((line) => ({ row: String(i + 1), ...line }))),
    );
    for (const key of twice) {
      const times = [...new Set(all.filter((line) => line.key === key).map((line) => `${line.before_fetched_at}>${line.after_fetched_at}`))];
      expect(times).toHaveLength(2);
      const [[a, b], [c, d]] = times.map((t) => t.split('>').map(Date.parse)) as [[number, number], [number, number]];
      // A → B, then B → C: the second begins where the first ended.
      expect(a).toBeLessThan(b);
      expect(b).toBe(c);
      expect(c).toBeLessThan(d);
    }
  });

  it('a run with --changes that looks keys up again lists its own changes and the carried ones at the same row; lead_changed names its own', async () => {
    const s = await sandbox({ drift: 0.5 });
    const people = emails(60);
    const { file, run } = setUp(s, people);
    await run('e0.csv');
    s.nextDay();
    await run('e1.csv', { refresh: true });
    s.nextDay();
    const summary = await run('e2.csv', { refresh: true, changes: file('changes.csv') });
    const [e0, e1, e2] = ['e0.csv', 'e1.csv', 'e2.csv'].map((name) => readCsvObjects(file(name)));
    const carried = changesBetween(e0!, e1!);
    const own = changesBetween(e1!, e2!);
    expect(linesOf(file('changes.csv'))).toEqual(
      people.flatMap((key, i) => [...(own.get(key) ?? []), ...(carried.get(key) ?? [])].map((line) => ({ row: String(i + 1), ...line }))),
    );
    expect(e2!.map((row) => row.lead_changed)).toEqual(people.map((key) => (own.get(key) ?? []).map((line) => line.field).join(';')));
    expect(summary.changed.rows).toBe(own.size);
    expect(summary.carriedOver.keys).toBe(carried.size);
  });
});

describe('what is marked reported', () => {
  const marks = (store: string, key: string) => {
    const opened = ResultStore.open({ path: store, readonly: true });
    try {
      return [...opened.entries({ key, history: true })].map((entry) => entry.change);
    } finally {
      opened.close();
    }
  };

  it('a run without --changes leaves every change unreported; the run with --changes marks what its file lists', async () => {
    const s = await sandbox({ drift: 0.5 });
    const people = emails(30);
    const { file, run, store } = setUp(s, people);
    await run('one.csv');
    s.nextDay();
    await run('two.csv', { refresh: true });
    const changed = [...changesBetween(readCsvObjects(file('one.csv')), readCsvObjects(file('two.csv'))).keys()];
    const same = people.find((key) => !changed.includes(key))!;
    expect(marks(store, changed[0]!)).toEqual([undefined, 'not_reported']);
    expect(marks(store, same)).toEqual([undefined, 'same']);
    // A second run without --changes, looking them up again: still nothing reported.
    await run('three.csv', { refresh: true });
    expect(marks(store, changed[0]!)).toEqual([undefined, 'same', 'not_reported']);
    await run('four.csv', { changes: file('changes.csv') });
    expect(marks(store, changed[0]!)).toEqual([undefined, 'same', 'reported']);
  });

  it('a run that fails before its --changes file is complete marks nothing: the next one lists what it carried and what it stored, once', async () => {
    const s = await sandbox({ drift: 0.5, latencyMs: [20, 20] });
    const people = emails(60);
    const { file, run, dir, input, store } = setUp(s, people);
    await run('e0.csv');
    s.nextDay();
    await run('e1.csv', { refresh: true });
    s.nextDay();
    // Its output fails once ten rows are done (a disk gone): the run fails, its --changes file is never complete.
    let broken = false;
    const output = new Writable({ write: (_chunk, _encoding, done) => done(broken ? new Error('the disk is gone') : null) });
    const failing = enrich({
      input,
      output,
      errors: file('failed.errors.csv'),
      baseUrl: s.baseUrl,
      token: s.token,
      store,
      refresh: true,
      changes: file('failed.csv'),
      concurrency: 2,
      tuning: { progressIntervalMs: 5 },
      onProgress: (p) => {
        if (p.rowsDone >= 10) broken = true;
      },
    });
    await expect(failing).rejects.toMatchObject({ code: 'unwritable_output' });
    expect(fs.readdirSync(dir).filter((name) => name.includes('failed'))).toEqual([]);
    // What the store holds now: some keys at the third answer (the failed run's), the others at the second.
    await run('now.csv', {});
    const [e0, e1, now] = ['e0.csv', 'e1.csv', 'now.csv'].map((name) => readCsvObjects(file(name)));
    const carried = changesBetween(e0!, e1!);
    const stored = changesBetween(e1!, now!);
    expect(stored.size).toBeGreaterThan(0);
    await run('listing.csv', { changes: file('changes.csv') });
    expect(linesOf(file('changes.csv'))).toEqual(
      people.flatMap((key, i) => [...(carried.get(key) ?? []), ...(stored.get(key) ?? [])].map((line) => ({ row: String(i + 1), ...line }))),
    );
    await run('again.csv', { changes: file('changes2.csv') });
    expect(linesOf(file('changes2.csv'))).toEqual([]);
  });
});

describe('which changes a run compares', () => {
  it("a lookup the run does not make is left for a run that makes it: a company's new name, listed by the next run --with company", async () => {
    let companyName = 'Acme Inc';
    const api = await accountOnlyServer((req) => {
      const url = new URL(req.url!, 'http://x');
      if (url.pathname.endsWith('/reverse_lookup/domain')) {
        return { status: 200, body: JSON.stringify({ status: 'success', data: { name: 'acme.com', lead: { name: companyName, id: 'c1' } } }) };
      }
      const email = url.searchParams.get('email_address');
      return {
        status: 200,
        body: JSON.stringify({ status: 'success', data: { email_address: email, lead: { name: 'Ann', title: 'CTO', company_domain: 'acme.com' } } }),
      };
    });
    closers.push(api.close);
    const { file, run } = setUp({ baseUrl: api.baseUrl, token: 'token-0123456789' }, ['ann@acme.com', 'bob@acme.com']);
    await run('one.csv', { with: ['company'] });
    companyName = 'Acme Holdings';
    await run('two.csv', { with: ['company'], refresh: true });
    // Without --with company: the company's change is not this run's to compare.
    await run('three.csv', { changes: file('c3.csv') });
    expect(linesOf(file('c3.csv'))).toEqual([]);
    const summary = await run('four.csv', { with: ['company'], changes: file('c4.csv') });
    // At the first row of that domain only: a carried change is listed once.
    expect(linesOf(file('c4.csv'))).toEqual([{ row: '1', key: 'acme.com', field: 'company_name', before: 'Acme Inc', after: 'Acme Holdings' }]);
    expect(summary.carriedOver).toEqual({ keys: 1, lines: 1, keysNotInFile: 0 });
    await run('five.csv', { with: ['company'], changes: file('c5.csv') });
    expect(linesOf(file('c5.csv'))).toEqual([]);
  });
});

describe('two runs with --changes at once on one store', () => {
  it('the first lists the changes stored before it, the second its own only (and says so): every change in one file, once', async () => {
    const s = await sandbox({ drift: 0.5, latencyMs: [5, 5] });
    const people = emails(80);
    const [half, rest] = [people.slice(0, 40), people.slice(40)];
    const { file, run, dir, store } = setUp(s, people);
    await run('e0.csv');
    s.nextDay();
    await run('e1.csv', { refresh: true });
    s.nextDay();
    const [e0, e1] = ['e0.csv', 'e1.csv'].map((name) => readCsvObjects(file(name)));
    const carried = changesBetween(e0!, e1!);
    // The first run, slowed, looks the first half up again; the second starts while it is going, on the other half.
    const firstInput = writeCsv(path.join(dir, 'first.csv'), [['email'], ...half.map((e) => [e])]);
    const secondInput = writeCsv(path.join(dir, 'second.csv'), [['email'], ...rest.map((e) => [e])]);
    const lookups = () => s.stats.byOperation.lookup_email!;
    const started = lookups();
    const first = enrich({
      input: firstInput,
      output: file('first.out.csv'),
      baseUrl: s.baseUrl,
      token: s.token,
      store,
      refresh: true,
      changes: file('first.changes.csv'),
      concurrency: 1,
    });
    while (lookups() - started < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    const warnings: string[] = [];
    const second = await enrich({
      input: secondInput,
      output: file('second.out.csv'),
      baseUrl: s.baseUrl,
      token: s.token,
      store,
      refresh: true,
      changes: file('second.changes.csv'),
      onWarning: (line) => warnings.push(line),
    });
    await first;
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^another run \(pid \d+\) is listing the changes stored before it in .*: this run lists the changes it finds itself, and leaves the earlier ones to the next run with --changes$/,
      ),
    );
    const own = (name: string, keys: string[]) =>
      changesBetween(
        readCsvObjects(file('e1.csv')).filter((row) => keys.includes(row.email!)),
        readCsvObjects(file(name)),
      );
    const [firstOwn, secondOwn] = [own('first.out.csv', half), own('second.out.csv', rest)];
    const sorted = (lines: Array<Omit<Line, 'row'>>) => [...lines].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    const listed = [...linesOf(file('first.changes.csv')), ...linesOf(file('second.changes.csv'))].map(({ row: _row, ...line }) => line);
    expect(sorted(listed)).toEqual(sorted([...carried.values(), ...firstOwn.values(), ...secondOwn.values()].flat()));
    expect(linesOf(file('second.changes.csv')).every((line) => secondOwn.has(line.key))).toBe(true);
    const after = await run('after.csv', { changes: file('after.changes.csv') });
    expect(after.carriedOver.lines).toBe(0);
  });
});

describe('nights of the two cron lines on one store', () => {
  it('every change the store keeps is in exactly one --changes file, whichever run stored it (one run with --changes failing midway)', async () => {
    const s = await sandbox({ drift: 0.3 });
    const people = emails(48);
    const { file, dir, store } = setUp(s, people);
    const inputOf = (name: string, keys: string[]) => writeCsv(path.join(dir, name), [['email'], ...keys.map((e) => [e])]);
    const base = { baseUrl: s.baseUrl, token: s.token, store };
    await enrich({ ...base, input: inputOf('all.csv', people), output: file('first.csv') });
    const files: string[] = [];
    for (let night = 1; night <= 6; night += 1) {
      s.nextDay();
      // The nightly enrichment (no --changes) looks a third of the contacts up again; which third turns each night.
      const third = people.filter((_, i) => i % 3 === night % 3);
      await enrich({ ...base, input: inputOf(`nightly-${night}.csv`, third), output: file(`nightly-${night}.out.csv`), refresh: true });
      // The "what changed" line: another third looked up again, the whole file listed; on night 3 its output breaks midway.
      const other = people.filter((_, i) => i % 3 === (night + 1) % 3);
      const changes = file(`changes-${night}.csv`);
      const input = inputOf(`changes-${night}.in.csv`, [...other, ...people.filter((key) => !other.includes(key))]);
      if (night === 3) {
        let broken = false;
        const output = new Writable({ write: (_chunk, _encoding, done) => done(broken ? new Error('the disk is gone') : null) });
        const before = s.stats.byOperation.lookup_email!;
        const onProgress = (p: { rowsDone: number }) => {
          if (p.rowsDone >= 8) broken = true;
        };
        await expect(
          enrich({
            ...base,
            input,
            output,
            errors: file('broken.errors.csv'),
            refresh: true,
            changes,
            concurrency: 1,
            tuning: { progressIntervalMs: 5 },
            onProgress,
          }),
        ).rejects.toThrow();
        expect(fs.existsSync(changes)).toBe(false);
        // It stored answers before it broke: their changes are the next night's to list.
        expect(s.stats.byOperation.lookup_email! - before).toBeGreaterThan(2);
        continue;
      }
      await enrich({ ...base, input, output: file(`changes-${night}.out.csv`), changes, maxAge: '90d' });
      files.push(changes);
    }
    const listed = files.flatMap((name) =>
      readCsvObjects(name).map(
        ({ key, field, before, after, before_fetched_at, after_fetched_at }) =>
          `${key} ${field} ${before} -> ${after} (${before_fetched_at} -> ${after_fetched_at})`,
      ),
    );
    // The truth: every answer the store kept for each key, oldest first, compared one with the next as the run writes them.
    const opened = ResultStore.open({ path: store, readonly: true });
    const answers = new Map<string, Array<{ found: boolean; cells: string[]; at: number }>>();
    for (const entry of opened.entries({ history: true })) {
      const data = JSON.parse(entry.data!) as unknown;
      answers.set(entry.key, [
        { found: entry.status === 'found', cells: answerCells('lookup_email', data)!, at: entry.fetchedAt },
        ...(answers.get(entry.key) ?? []),
      ]);
    }
    opened.close();
    const names = ownColumnNames('email');
    const iso = (ms: number) => new Date(ms).toISOString();
    const truth = [...answers].flatMap(([key, list]) =>
      list.slice(1).flatMap((now, i) => {
        const then = list[i]!;
        const when = `(${iso(then.at)} -> ${iso(now.at)})`;
        if (then.found !== now.found) return [`${key} status ${then.found ? 'found' : 'not_found'} -> ${now.found ? 'found' : 'not_found'} ${when}`];
        return names.flatMap((name, c) => (then.cells[c] === now.cells[c] ? [] : [`${key} ${name} ${then.cells[c]} -> ${now.cells[c]} ${when}`]));
      }),
    );
    expect(truth.length).toBeGreaterThan(20);
    expect([...listed].sort()).toEqual([...truth].sort());
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteFile } from '../helpers/sqlite.js';
import { hangBound, start } from '../helpers/processes.js';
import ts from 'typescript';
import { afterAll, describe, expect } from 'vitest';
import { it } from '../helpers/cli-words.js';
import { ConfigError } from '../../src/api/errors.js';
import { defaultStorePath } from '../../src/store/default-path.js';
import { formatDuration, parseDuration } from '../../src/core/duration.js';
import { ResultStore, SCHEMA_VERSION } from '../../src/store/result-store.js';

// The store's messages as the command line's user reads them, whose store it is (a program's
// words for the same failures: test/integration/library-words.test.ts).

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SERVICE = 'https://api.example.test/v1';
const SANDBOX = 'http://127.0.0.1:4010/v1';
const RUN = 'run-1';

const tmpDirs: string[] = [];
function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lead-enrich-store-'));
  tmpDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
});

function tmpStorePath(): string {
  return path.join(tmpDir(), 'results.sqlite');
}

/** Read a store file through an independent connection: shows what is committed, nothing more. */
function committedCount(file: string): number {
  const db = openSqliteFile(file, { readonly: true });
  try {
    return db.value('SELECT count(*) FROM results') as number;
  } finally {
    db.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const LEAD_DATA = {
  email_address: 'jane.doe@example.com',
  lead: {
    id: 'ld_123',
    name: 'Jane Doe',
    contructed_title: 'VP Engineering',
    company_name: 'Example Inc',
    addresses: [{ city: 'Lisbon', country_code: 'PT' }],
    total_experience_in_months: 144,
    some_future_field: { nested: [1, 'two', null, true] },
  },
  unknown_top_level: 'kept',
};

describe('ResultStore: get/put', () => {
  it('round-trips data with unknown fields, found flag, time and run id', () => {
    const store = ResultStore.open({ path: tmpStorePath(), now: () => 1_000 });
    store.put(SERVICE, 'lookup_email', 'jane.doe@example.com', { found: true, data: LEAD_DATA }, RUN);
    store.flush();
    expect(store.get(SERVICE, 'lookup_email', 'jane.doe@example.com')).toEqual({
      found: true,
      data: LEAD_DATA,
      fetchedAt: 1_000,
      runId: RUN,
    });
    expect(store.get(SERVICE, 'lookup_email', 'other@example.com')).toBeUndefined();
    expect(store.get(SERVICE, 'lookup_url', 'jane.doe@example.com')).toBeUndefined();
    store.close();
  });

  it('keeps "not found" answers', () => {
    const store = ResultStore.open({ path: ':memory:' });
    store.put(SERVICE, 'lookup_domain', 'nothing.example', { found: false, data: {} }, RUN);
    store.put(SERVICE, 'lookup_url', 'https://network.example/in/nobody', { found: false, data: undefined }, RUN);
    store.flush();
    expect(store.get(SERVICE, 'lookup_domain', 'nothing.example')).toMatchObject({ found: false, data: {} });
    const noData = store.get(SERVICE, 'lookup_url', 'https://network.example/in/nobody');
    expect(noData).toMatchObject({ found: false, runId: RUN });
    expect(noData?.data).toBeUndefined();
    store.close();
  });

  it('stores a snapshot: changing the object after put() changes nothing', () => {
    const store = ResultStore.open({ path: ':memory:' });
    const data = { lead: { name: 'A' } };
    store.put(SERVICE, 'lookup_email', 'a@x.test', { found: true, data }, RUN);
    data.lead.name = 'B';
    expect(store.get(SERVICE, 'lookup_email', 'a@x.test')?.data).toEqual({ lead: { name: 'A' } });
    store.close();
  });

  it('shows pending (not yet committed) entries to get()', () => {
    const file = tmpStorePath();
    const store = ResultStore.open({ path: file, flushIntervalMs: 60_000, flushBatchSize: 1_000 });
    store.put(SERVICE, 'lookup_email', 'a@x.test', { found: true, data: { n: 1 } }, RUN);
    expect(committedCount(file)).toBe(0);
    expect(store.get(SERVICE, 'lookup_email', 'a@x.test')).toMatchObject({ found: true, data: { n: 1 } });
    store.close();
    expect(committedCount(file)).toBe(1);
  });

  it('ignores entries older than maxAgeMs (pending and committed)', () => {
    let now = 10_000;
    const store = ResultStore.open({ path: ':memory:', now: () => now, flushIntervalMs: 60_000 });
    store.put(SERVICE, 'mx', 'old.example', { found: true, data: { v: 1 } }, RUN);
    now = 15_000;
    expect(store.get(SERVICE, 'mx', 'old.example', 5_000)).toBeDefined(); // exactly maxAge old: still good
    expect(store.get(SERVICE, 'mx', 'old.example', 4_999)).toBeUndefined(); // pending path
    store.flush();
    expect(store.get(SERVICE, 'mx', 'old.example', 4_999)).toBeUndefined(); // committed path
    expect(store.get(SERVICE, 'mx', 'old.example', 5_000)).toBeDefined();
    expect(store.get(SERVICE, 'mx', 'old.example')).toBeDefined(); // no limit
    store.close();
  });

  it('replaces an entry on refresh (upsert), pending or committed', () => {
    let now = 1;
    const store = ResultStore.open({ path: tmpStorePath(), now: () => now, flushIntervalMs: 60_000 });
    store.put(SERVICE, 'whois', 'x.example', { found: false, data: {} }, 'run-a');
    store.flush();
    now = 2;
    store.put(SERVICE, 'whois', 'x.example', { found: true, data: { registrar: 'R' } }, 'run-b');
    expect(store.get(SERVICE, 'whois', 'x.example')).toEqual({
      found: true,
      data: { registrar: 'R' },
      fetchedAt: 2,
      runId: 'run-b',
    });
    store.flush();
    expect(store.get(SERVICE, 'whois', 'x.example')).toEqual({
      found: true,
      data: { registrar: 'R' },
      fetchedAt: 2,
      runId: 'run-b',
    });
    expect(store.stats().entries).toBe(1);
    store.close();
  });

  it('never mixes answers of different services', () => {
    const store = ResultStore.open({ path: tmpStorePath() });
    store.put(SERVICE, 'lookup_email', 'a@x.test', { found: true, data: { from: 'real' } }, RUN);
    store.put(SANDBOX, 'lookup_email', 'a@x.test', { found: true, data: { from: 'sandbox' } }, RUN);
    expect(store.get(SERVICE, 'lookup_email', 'a@x.test')?.data).toEqual({ from: 'real' });
    store.flush();
    expect(store.get(SERVICE, 'lookup_email', 'a@x.test')?.data).toEqual({ from: 'real' });
    expect(store.get(SANDBOX, 'lookup_email', 'a@x.test')?.data).toEqual({ from: 'sandbox' });
    expect(store.get('https://other.example', 'lookup_email', 'a@x.test')).toBeUndefined();
    expect(store.stats().byService).toEqual({ [SERVICE]: 1, [SANDBOX]: 1 });
    store.close();
  });

  it('refuses use after close, and close is idempotent', () => {
    const store = ResultStore.open({ path: ':memory:' });
    store.close();
    store.close();
    expect(() => store.get(SERVICE, 'mx', 'a')).toThrow(/closed/);
    expect(() => store.put(SERVICE, 'mx', 'a', { found: true, data: {} }, RUN)).toThrow(/closed/);
  });
});

describe('ResultStore: getMany', () => {
  it('answers a batch of keys in one go, committed and pending alike, by service, operation and age', () => {
    let now = 1_000_000;
    const store = ResultStore.open({ path: path.join(tmpDir(), 'r.sqlite'), flushBatchSize: 100_000, now: () => now });
    const keys = Array.from({ length: 250 }, (_, i) => `k${i}@x.com`);
    keys.slice(0, 150).forEach((key, i) => {
      store.put('svc', 'lookup_email', key, { found: i % 2 === 0, data: { lead: { n: i } } }, 'run-1');
    });
    store.flush();
    now += 1000;
    keys.slice(150, 200).forEach((key, i) => {
      store.put('svc', 'lookup_email', key, { found: true, data: { lead: { n: 150 + i } } }, 'run-2');
    });
    store.put('other', 'lookup_email', keys[220]!, { found: true, data: {} }, 'run-2');
    store.put('svc', 'mx', keys[230]!, { found: true, data: {} }, 'run-2');

    const all = store.getMany('svc', 'lookup_email', keys);
    expect(all.size).toBe(200);
    expect(all.get(keys[3]!)).toEqual({ found: false, data: { lead: { n: 3 } }, fetchedAt: 1_000_000, runId: 'run-1' });
    expect(all.get(keys[170]!)).toEqual({ found: true, data: { lead: { n: 170 } }, fetchedAt: 1_001_000, runId: 'run-2' });
    expect(all.has(keys[220]!)).toBe(false);
    expect(all.has(keys[230]!)).toBe(false);
    // Same answers as one get() per key.
    for (const key of keys) expect(all.get(key)).toEqual(store.get('svc', 'lookup_email', key));
    // Only the entries younger than maxAge.
    expect(store.getMany('svc', 'lookup_email', keys, 500).size).toBe(50);
    expect(store.getMany('nobody', 'lookup_email', keys).size).toBe(0);
    store.close();
  });
});

describe('ResultStore: durability', () => {
  it('commits as soon as flushBatchSize entries are pending', () => {
    const file = tmpStorePath();
    const store = ResultStore.open({ path: file, flushIntervalMs: 60_000, flushBatchSize: 3 });
    for (let i = 0; i < 5; i++) store.put(SERVICE, 'lookup_email', `u${i}@x.test`, { found: true, data: { i } }, RUN);
    expect(committedCount(file)).toBe(3);
    store.close();
    expect(committedCount(file)).toBe(5);
  });

  it('flushIntervalMs 0: the answers of one turn go in one commit at its end, which committed() waits for', async () => {
    const file = tmpStorePath();
    const store = ResultStore.open({ path: file, flushIntervalMs: 0 });
    expect(store.committed()).toBeUndefined();
    store.put(SERVICE, 'lookup_email', 'a@x.test', { found: true, data: { n: 1 } }, RUN);
    store.put(SERVICE, 'lookup_email', 'b@x.test', { found: false, data: {} }, RUN);
    const done = store.committed();
    expect(done).toBeInstanceOf(Promise);
    expect(committedCount(file)).toBe(0);
    expect(store.get(SERVICE, 'lookup_email', 'a@x.test')).toMatchObject({ found: true });
    await done;
    expect(committedCount(file)).toBe(2);
    expect(store.committed()).toBeUndefined();
    // A flush in between (stats, a claim) settles it too.
    store.put(SERVICE, 'lookup_email', 'c@x.test', { found: true, data: {} }, RUN);
    const early = store.committed();
    store.flush();
    await early;
    expect(committedCount(file)).toBe(3);
    store.close();
  });

  it('commits on the timer: a second store on the same file sees entries while the first is open', async () => {
    const file = tmpStorePath();
    const writer = ResultStore.open({ path: file, flushIntervalMs: 20, flushBatchSize: 1_000 });
    writer.put(SERVICE, 'lookup_email', 'a@x.test', { found: true, data: { n: 1 } }, RUN);
    const reader = ResultStore.open({ path: file, flushIntervalMs: 20 });
    expect(reader.get(SERVICE, 'lookup_email', 'a@x.test')).toBeUndefined();
    await sleep(120);
    expect(reader.get(SERVICE, 'lookup_email', 'a@x.test')).toMatchObject({ found: true, data: { n: 1 } });
    // And later entries of a service the reader has already seen.
    writer.put(SERVICE, 'lookup_email', 'b@x.test', { found: false, data: {} }, RUN);
    await sleep(120);
    expect(reader.get(SERVICE, 'lookup_email', 'b@x.test')).toMatchObject({ found: false });
    reader.close();
    writer.close();
  });

  it('keeps data across close and reopen', () => {
    const file = tmpStorePath();
    const first = ResultStore.open({ path: file });
    first.put(SERVICE, 'lookup_url', 'https://network.example/in/jane', { found: true, data: LEAD_DATA }, RUN);
    first.close();
    const second = ResultStore.open({ path: file });
    expect(second.get(SERVICE, 'lookup_url', 'https://network.example/in/jane')).toMatchObject({
      found: true,
      data: LEAD_DATA,
      runId: RUN,
    });
    second.close();
  });

  describe('in a child process', () => {
    /** `files` and every source file they import (relative paths from the repository root). */
    function importedFrom(files: string[]): string[] {
      const seen = new Set<string>();
      const visit = (rel: string): void => {
        if (seen.has(rel) || !fs.existsSync(path.join(ROOT, rel))) return;
        seen.add(rel);
        const text = fs.readFileSync(path.join(ROOT, rel), 'utf8');
        for (const m of text.matchAll(/from\s+'(\.[^']+)\.js'/g)) visit(path.posix.join(path.posix.dirname(rel), `${m[1]}.ts`));
      };
      files.forEach(visit);
      return [...seen];
    }

    // No TS loader exists for a plain `node` child here, so the store and its imports are
    // transpiled into a temporary package that links the project's node_modules.
    function buildChildPackage(): string {
      const dir = tmpDir();
      // The store's own files and every file they import, found by following the imports.
      for (const rel of importedFrom(fs.readdirSync(path.join(ROOT, 'src/store')).map((name) => `src/store/${name}`))) {
        const source = fs.readFileSync(path.join(ROOT, rel), 'utf8');
        const out = ts.transpileModule(source, {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false },
        }).outputText;
        const target = path.join(dir, rel.replace(/\.ts$/, '.js'));
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.writeFileSync(target, out);
      }
      fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
      fs.writeFileSync(
        path.join(dir, 'child.mjs'),
        `import { ResultStore } from './src/store/result-store.js';
         const [file, mode] = process.argv.slice(2);
         const store = ResultStore.open({ path: file, flushIntervalMs: 50, flushBatchSize: 10000 });
         for (let i = 0; i < 1000; i++) {
           store.put('svc', 'lookup_email', 'u' + i + '@x.test', { found: true, data: { i } }, 'child');
         }
         if (mode === 'exit') process.exit(0); // no close(): the exit hook must flush
         process.stdout.write('ready\\n');
         setInterval(() => {}, 1000); // stay alive until killed
        `,
      );
      return dir;
    }

    async function runChild(dir: string, file: string, mode: 'kill' | 'exit'): Promise<NodeJS.Signals | number | null> {
      const child = start(process.execPath, [path.join(dir, 'child.mjs'), file, mode], { stdin: 'ignore' });
      const onData = () => {
        if (!child.output.stdout.includes('ready')) return;
        child.stdout!.off('data', onData);
        // Past the flush interval, then the hardest kill there is.
        setTimeout(() => child.kill('SIGKILL'), 250);
      };
      child.stdout!.on('data', onData);
      const { code, signal, stderr } = await child.result;
      if (stderr !== '') process.stderr.write(stderr);
      return signal ?? code;
    }

    let childDir: string | undefined;
    const childPackage = () => (childDir ??= buildChildPackage());

    it(
      'loses nothing older than the flush interval when SIGKILLed',
      async () => {
        const file = tmpStorePath();
        expect(await runChild(childPackage(), file, 'kill')).toBe('SIGKILL');
        const store = ResultStore.open({ path: file });
        expect(store.stats().entries).toBe(1000);
        expect(store.get('svc', 'lookup_email', 'u999@x.test')).toMatchObject({ data: { i: 999 }, runId: 'child' });
        store.close();
      },
      hangBound(15_000),
    );

    it(
      'flushes pending entries on process.exit() without close()',
      async () => {
        const file = tmpStorePath();
        expect(await runChild(childPackage(), file, 'exit')).toBe(0);
        expect(committedCount(file)).toBe(1000);
      },
      hangBound(15_000),
    );
  });
});

describe('ResultStore: file', () => {
  it('creates parent directories 0700 and the file 0600, in WAL mode with a schema version', () => {
    const base = tmpDir();
    const file = path.join(base, 'a', 'b', 'results.sqlite');
    const store = ResultStore.open({ path: file });
    store.put(SERVICE, 'mx', 'x.example', { found: true, data: {} }, RUN);
    store.flush();
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(`${file}-wal`).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(base, 'a')).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(base, 'a', 'b')).mode & 0o777).toBe(0o700);
    store.close();
    const db = openSqliteFile(file, { readonly: true });
    expect(db.pragma('journal_mode')).toBe('wal');
    expect(db.pragma('user_version')).toBe(SCHEMA_VERSION);
    db.close();
  });

  it('reports an unusable path as a ConfigError naming the path and the fix', () => {
    const base = tmpDir();
    const notADir = path.join(base, 'plain-file');
    fs.writeFileSync(notADir, 'x');
    const file = path.join(notADir, 'sub', 'results.sqlite');
    let error: unknown;
    try {
      ResultStore.open({ path: file });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toBe(
      `Cannot open the result store at ${file}: a part of the path is not a directory; check the path, or pass --store PATH or set LEAD_ENRICH_STORE to use another file`,
    );
    expect(message).not.toContain('\n');
    expect((error as ConfigError).code).toBe('config');
    // The file itself as the store's folder: mkdir says EEXIST, which is the same problem.
    const underFile = path.join(notADir, 'results.sqlite');
    expect(() => ResultStore.open({ path: underFile })).toThrow(
      `Cannot open the result store at ${underFile}: a part of the path is a file, not a directory; check the path, or pass --store PATH or set LEAD_ENRICH_STORE to use another file`,
    );
  });

  it('reports a directory given as the store path', () => {
    const dir = tmpDir();
    expect(() => ResultStore.open({ path: dir })).toThrow(
      new ConfigError(`Cannot open the result store at ${dir}: it is a directory; give a file inside it (--store ${path.join(dir, 'results.sqlite')})`),
    );
  });

  // Skipped as root (CI and these machines run as root): root writes through any permission bits,
  // so the failure cannot be produced. The "not a directory" case above covers the same message path.
  it.skipIf(process.getuid?.() === 0)(
    'reports a directory without write permission',
    { meta: { skipReason: 'running as root, which writes through any permission bits' } },
    () => {
      const dir = tmpDir();
      fs.chmodSync(dir, 0o500);
      try {
        expect(() => ResultStore.open({ path: path.join(dir, 'results.sqlite') })).toThrow(/permission denied/);
      } finally {
        fs.chmodSync(dir, 0o700);
      }
    },
  );

  it('refuses a file that is not a SQLite database, and leaves it alone', () => {
    const file = path.join(tmpDir(), 'contacts.csv');
    const content = 'email\n'.repeat(200);
    fs.writeFileSync(file, content);
    expect(() => ResultStore.open({ path: file })).toThrow(
      new ConfigError(
        `Cannot open the result store at ${file}: it is not a SQLite database (another program's file?); it was left untouched; pass --store PATH or set LEAD_ENRICH_STORE to use another file`,
      ),
    );
    expect(fs.readFileSync(file, 'utf8')).toBe(content);
  });

  it('says a damaged store is damaged, and how to move it aside', () => {
    const file = tmpStorePath();
    const store = ResultStore.open({ path: file });
    store.put(SERVICE, 'mx', 'x.example', { found: true, data: { a: 1 } }, RUN);
    store.close();
    // Bytes over the schema's own b-tree page (page 1, after the 100-byte file header).
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.alloc(200, 0xab), 0, 200, 100);
    fs.closeSync(fd);
    expect(() => ResultStore.open({ path: file })).toThrow(
      new ConfigError(
        `Cannot open the result store at ${file}: the database file is damaged; see what is wrong with lead-enrich store check --store '${file}'; move it aside (mv '${file}' '${file}.damaged') and run again (answers are bought again only when needed), or pass --store PATH or set LEAD_ENRICH_STORE to use another file`,
      ),
    );
  });

  it('refuses a SQLite database that is not a result store', () => {
    const file = path.join(tmpDir(), 'other.sqlite');
    const db = openSqliteFile(file);
    db.exec('CREATE TABLE t (x)');
    db.close();
    expect(() => ResultStore.open({ path: file })).toThrow(ConfigError);
    expect(() => ResultStore.open({ path: file })).toThrow(/not a lead-enrich result store/);
  });

  it('refuses a store written by a newer schema', () => {
    const file = tmpStorePath();
    ResultStore.open({ path: file }).close();
    const db = openSqliteFile(file);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => ResultStore.open({ path: file })).toThrow(/newer lead-enrich/);
  });

  it('opens read-only: reads work, writes are refused, a missing file is a clear error', () => {
    const file = tmpStorePath();
    const writer = ResultStore.open({ path: file });
    writer.put(SERVICE, 'mx', 'x.example', { found: true, data: { a: 1 } }, RUN);
    writer.close();
    const reader = ResultStore.open({ path: file, readonly: true });
    expect(reader.get(SERVICE, 'mx', 'x.example')?.data).toEqual({ a: 1 });
    expect(reader.stats().entries).toBe(1);
    expect(() => reader.put(SERVICE, 'mx', 'y', { found: true, data: {} }, RUN)).toThrow(/read-only/);
    expect(() => reader.clear()).toThrow(/read-only/);
    reader.close();
    expect(() => ResultStore.open({ path: path.join(tmpDir(), 'none.sqlite'), readonly: true })).toThrow(/no such file/);
  });

  it('validates its options', () => {
    expect(() => ResultStore.open({ path: '' })).toThrow(ConfigError);
    expect(() => ResultStore.open({ path: ':memory:', flushBatchSize: 0 })).toThrow(/flushBatchSize/);
    expect(() => ResultStore.open({ path: ':memory:', flushIntervalMs: -1 })).toThrow(/flushIntervalMs/);
  });
});

describe('ResultStore: stats, prune, clear', () => {
  it('counts by operation and service, knows oldest/newest and size', () => {
    let now = 1_000;
    const file = tmpStorePath();
    const store = ResultStore.open({ path: file, now: () => now });
    store.put(SERVICE, 'lookup_email', 'a@x.test', { found: true, data: {} }, RUN);
    now = 2_000;
    store.put(SERVICE, 'lookup_email', 'b@x.test', { found: false, data: {} }, RUN);
    now = 3_000;
    store.put(SANDBOX, 'mx', 'x.example', { found: true, data: {} }, RUN);
    const stats = store.stats(); // includes pending entries
    expect(stats).toMatchObject({
      entries: 3,
      byOperation: { lookup_email: 2, mx: 1 },
      byService: { [SERVICE]: 2, [SANDBOX]: 1 },
      oldest: 1_000,
      newest: 3_000,
      path: file,
    });
    expect(stats.sizeBytes).toBeGreaterThan(0);
    store.close();

    const empty = ResultStore.open({ path: ':memory:' });
    const emptyStats = empty.stats();
    expect(emptyStats).toMatchObject({ entries: 0, byOperation: {}, byService: {}, path: ':memory:' });
    expect(emptyStats.oldest).toBeUndefined();
    expect(emptyStats.newest).toBeUndefined();
    empty.close();
  });

  it('prunes entries fetched before now - age, and clears everything', () => {
    let now = 0;
    const store = ResultStore.open({ path: tmpStorePath(), now: () => now });
    for (let i = 0; i < 10; i++) {
      now = i * 1_000;
      store.put(SERVICE, 'lookup_domain', `d${i}.example`, { found: true, data: { i } }, RUN);
    }
    now = 10_000;
    expect(store.prune(5_000)).toBe(5); // fetched at 0..4000 < 5000
    expect(store.get(SERVICE, 'lookup_domain', 'd4.example')).toBeUndefined();
    expect(store.get(SERVICE, 'lookup_domain', 'd5.example')).toBeDefined();
    expect(store.stats().oldest).toBe(5_000);
    expect(store.clear()).toBe(5);
    expect(store.stats().entries).toBe(0);
    // Usable again after clear (service ids survive it).
    store.put(SERVICE, 'lookup_domain', 'd1.example', { found: true, data: {} }, RUN);
    store.flush();
    expect(store.get(SERVICE, 'lookup_domain', 'd1.example')).toBeDefined();
    store.close();
  });

  it('gives space back after clear', () => {
    const file = tmpStorePath();
    const store = ResultStore.open({ path: file, flushBatchSize: 1_000 });
    for (let i = 0; i < 3_000; i++) store.put(SERVICE, 'lookup_email', `u${i}@x.test`, { found: true, data: LEAD_DATA }, RUN);
    const before = store.stats().sizeBytes;
    store.clear();
    const after = store.stats().sizeBytes;
    expect(after).toBeLessThan(before / 4);
    store.close();
  });
});

describe('ResultStore: speed (printed, not asserted)', () => {
  it(
    'measures gets/s on hits and puts/s',
    () => {
      const n = 100_000;
      const store = ResultStore.open({ path: tmpStorePath(), flushIntervalMs: 60_000 });
      const keys = Array.from({ length: n }, (_, i) => `user${i}@example.com`);
      let t = performance.now();
      for (const key of keys) store.put(SERVICE, 'lookup_email', key, { found: true, data: LEAD_DATA }, RUN);
      store.flush();
      const putsPerSec = n / ((performance.now() - t) / 1000);
      t = performance.now();
      let hits = 0;
      for (const key of keys) if (store.get(SERVICE, 'lookup_email', key, 86_400_000) !== undefined) hits++;
      const getsPerSec = n / ((performance.now() - t) / 1000);
      t = performance.now();
      for (const key of keys) store.get(SERVICE, 'lookup_email', `miss-${key}`);
      const missesPerSec = n / ((performance.now() - t) / 1000);
      expect(hits).toBe(n);
      console.log(
        `result store, ${n} entries of ${JSON.stringify(LEAD_DATA).length} B JSON: ` +
          `puts ${Math.round(putsPerSec).toLocaleString('en')}/s (incl. commits of 500), ` +
          `get hits ${Math.round(getsPerSec).toLocaleString('en')}/s, ` +
          `get misses ${Math.round(missesPerSec).toLocaleString('en')}/s`,
      );
      store.close();
    },
    hangBound(30_000),
  );
});

describe('parseDuration / formatDuration', () => {
  it.each([
    ['30d', 30 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['15m', 15 * 60_000],
    ['45s', 45_000],
    ['500ms', 500],
    ['2w', 14 * 86_400_000],
    ['1d12h', 36 * 3_600_000],
    ['1d 12h', 36 * 3_600_000],
    ['1m30s', 90_000],
    ['1.5h', 5_400_000],
    ['0s', 0],
    [' 10m ', 600_000],
  ])('parses %j', (text, ms) => {
    expect(parseDuration(text, '--max-age')).toBe(ms);
  });

  it.each(['abc', '', '10', '1.5', '10x', 'd', '-5m', '10 minutes', '5M', '1d-2h', '1e3s', '5mss'])('rejects %j with a message naming the option', (text) => {
    expect(() => parseDuration(text, '--max-age')).toThrow(ConfigError);
    expect(() => parseDuration(text, '--max-age')).toThrow(`Invalid option --max-age: must be a duration such as 30d, 12h or 15m, got '${text}'`);
  });

  it('explains why a bare number is refused', () => {
    expect(() => parseDuration('30', '--older-than')).toThrow(
      "Invalid option --older-than: must be a duration such as 30d, 12h or 15m, got '30' (a bare number is ambiguous: add a unit, one of ms, s, m, h, d, w)",
    );
  });

  it('formats for humans', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(45_000)).toBe('45s');
    expect(formatDuration(500)).toBe('500ms');
    expect(formatDuration(90_000)).toBe('1m 30s');
    expect(formatDuration(2 * 86_400_000 + 3 * 3_600_000 + 59_000)).toBe('2d 3h');
    expect(formatDuration(30 * 86_400_000)).toBe('30d');
    expect(formatDuration(-45_000)).toBe('-45s');
    expect(parseDuration(formatDuration(36 * 3_600_000), 'x')).toBe(36 * 3_600_000);
  });
});

describe('defaultStorePath', () => {
  it('uses LEAD_ENRICH_STORE when set', () => {
    expect(defaultStorePath({ LEAD_ENRICH_STORE: '/data/store.sqlite', XDG_CACHE_HOME: '/xdg' })).toBe('/data/store.sqlite');
  });

  it("uses each platform's cache folder on macOS and Windows", () => {
    const home = os.homedir();
    expect(defaultStorePath({ XDG_CACHE_HOME: '/xdg' }, 'darwin')).toBe(path.join(home, 'Library', 'Caches', 'lead-enrich', 'results.sqlite'));
    expect(defaultStorePath({ LOCALAPPDATA: '/local' }, 'win32')).toBe(path.join('/local', 'lead-enrich', 'Cache', 'results.sqlite'));
    expect(defaultStorePath({}, 'win32')).toBe(path.join(home, 'AppData', 'Local', 'lead-enrich', 'Cache', 'results.sqlite'));
  });

  // Linux only: XDG_CACHE_HOME is the Linux convention (macOS and Windows have folders of their own).
  it.runIf(process.platform === 'linux')('uses XDG_CACHE_HOME on Linux, else ~/.cache', () => {
    expect(defaultStorePath({ XDG_CACHE_HOME: '/xdg/cache' })).toBe('/xdg/cache/lead-enrich/results.sqlite');
    expect(defaultStorePath({ LEAD_ENRICH_STORE: '', XDG_CACHE_HOME: '/xdg/cache' })).toBe('/xdg/cache/lead-enrich/results.sqlite');
    expect(defaultStorePath({})).toBe(path.join(os.homedir(), '.cache', 'lead-enrich', 'results.sqlite'));
    // The XDG spec: a relative value is invalid and ignored.
    expect(defaultStorePath({ XDG_CACHE_HOME: 'relative/cache' })).toBe(path.join(os.homedir(), '.cache', 'lead-enrich', 'results.sqlite'));
  });
});

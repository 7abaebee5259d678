// `lead-enrich store stats|prune|clear`, driven through yargs with a capturing CliIo.
// (src/cli/main.ts runs main() when imported, so the command module is mounted here directly.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import yargs from 'yargs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/api/errors.js';
import type { Operation } from '../src/api/types.js';
import { formatStoreStats, storeCommand } from '../src/cli/store-command.js';
import type { CliIo } from '../src/cli/io.js';
import { ResultStore } from '../src/store/result-store.js';

interface Captured {
  out: string;
  err: string[];
  status: number | undefined;
}

async function run(argv: string[]): Promise<Captured> {
  const captured: Captured = { out: '', err: [], status: undefined };
  const io: CliIo = {
    out: (text) => {
      captured.out += text;
    },
    err: (line) => {
      captured.err.push(line);
    },
    setStatus: (s) => {
      captured.status = s;
    },
    isTty: false,
  };
  await yargs(argv)
    .scriptName('lead-enrich')
    .command(storeCommand(io))
    .strict()
    .exitProcess(false)
    .fail((message, error) => {
      throw error ?? new Error(message);
    })
    .parseAsync();
  return captured;
}

/** The error `run` rejects with (or fails the test when it does not). */
async function runFails(argv: string[]): Promise<Error> {
  try {
    await run(argv);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`expected ${argv.join(' ')} to fail`);
}

const dirs: string[] = [];
function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lead-enrich-store-cmd-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const DAY = 86_400_000;
const NOW = Date.now();

/** A store with entries fetched `ageDays` ago, through the store's own API (clock injected). */
function populate(file: string, entries: Array<{ service: string; op: Operation; key: string; ageDays: number }>): void {
  for (const e of entries) {
    const store = ResultStore.open({ path: file, now: () => NOW - e.ageDays * DAY, flushIntervalMs: 0 });
    try {
      store.put(e.service, e.op, e.key, { found: true, data: { lead: { name: e.key } } }, 'run-1');
    } finally {
      store.close();
    }
  }
}

const SAMPLE = [
  { service: 'sandbox', op: 'lookup_email' as const, key: 'a@acme.com', ageDays: 40 },
  { service: 'sandbox', op: 'lookup_email' as const, key: 'b@acme.com', ageDays: 10 },
  { service: 'sandbox', op: 'mx' as const, key: 'acme.com', ageDays: 2 },
  { service: 'https://api.example.com/v2', op: 'lookup_domain' as const, key: 'acme.com', ageDays: 0 },
];

let envStore: string | undefined;
beforeEach(() => {
  envStore = process.env.LEAD_ENRICH_STORE;
});
afterEach(() => {
  if (envStore === undefined) delete process.env.LEAD_ENRICH_STORE;
  else process.env.LEAD_ENRICH_STORE = envStore;
});

describe('store stats', () => {
  it('a missing store: one clear line, status untouched, no file created', async () => {
    const file = path.join(tmpDir(), 'nested', 'none.sqlite');
    const r = await run(['store', 'stats', '--store', file]);
    expect(r.out).toBe(`No result store yet at ${file}. It is created by the first enrich run (or pass --store PATH).\n`);
    expect(r.err).toEqual([]);
    expect(r.status).toBeUndefined();
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(path.dirname(file))).toBe(false);
  });

  it('a missing store with --json', async () => {
    const file = path.join(tmpDir(), 'none.sqlite');
    const r = await run(['store', 'stats', '--store', file, '--json']);
    expect(JSON.parse(r.out)).toEqual({
      path: file, exists: false, sizeBytes: 0, entries: 0, byOperation: {}, byService: {}, oldest: null, newest: null,
    });
  });

  it('an empty store', async () => {
    const file = path.join(tmpDir(), 'empty.sqlite');
    ResultStore.open({ path: file }).close();
    const r = await run(['store', 'stats', '--store', file]);
    expect(r.out).toMatch(new RegExp(`^Result store +${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    expect(r.out).toMatch(/^Entries +0$/m);
    expect(r.out).toMatch(/^By operation +-$/m);
    expect(r.out).toMatch(/^Oldest +-$/m);
    const j = JSON.parse((await run(['store', 'stats', '--store', file, '--json'])).out);
    expect(j).toMatchObject({ exists: true, entries: 0, oldest: null, newest: null });
    expect(j.sizeBytes).toBeGreaterThan(0);
  });

  it('a populated store: size, counts by operation and service, oldest and newest with ages', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    const r = await run(['store', 'stats', '--store', file]);
    expect(r.err).toEqual([]);
    expect(r.out).toMatch(/^Size +\d+(\.\d)? (B|KiB|MiB)$/m);
    expect(r.out).toMatch(/^Entries +4$/m);
    expect(r.out).toMatch(/^By operation +lookup_email +2$/m);
    expect(r.out).toMatch(/^ +lookup_domain +1$/m);
    expect(r.out).toMatch(/^ +mx +1$/m);
    expect(r.out).toMatch(/^By service +sandbox +3$/m);
    expect(r.out).toMatch(/^ +https:\/\/api\.example\.com\/v2 +1$/m);
    const oldest = new Date(NOW - 40 * DAY).toISOString();
    const newest = new Date(NOW).toISOString();
    expect(r.out).toMatch(new RegExp(`^Oldest +${oldest} \\(40d( \\d+s)? ago\\)$`, 'm'));
    expect(r.out).toMatch(new RegExp(`^Newest +${newest} \\((\\d+ms|\\d+s|\\d+s \\d+ms|0s) ago\\)$`, 'm'));

    const j = JSON.parse((await run(['store', 'stats', '--store', file, '--json'])).out);
    expect(j).toEqual({
      path: file,
      exists: true,
      sizeBytes: expect.any(Number),
      entries: 4,
      byOperation: { lookup_email: 2, mx: 1, lookup_domain: 1 },
      byService: { sandbox: 3, 'https://api.example.com/v2': 1 },
      oldest,
      newest,
    });
  });

  it('reads the store without changing it', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    const before = fs.readFileSync(file);
    await run(['store', 'stats', '--store', file]);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });

  it('LEAD_ENRICH_STORE is the default, --store wins over it', async () => {
    const fromEnv = path.join(tmpDir(), 'env.sqlite');
    populate(fromEnv, SAMPLE.slice(0, 1));
    process.env.LEAD_ENRICH_STORE = fromEnv;
    expect((await run(['store', 'stats'])).out).toContain(`Result store  ${fromEnv}`);
    const other = path.join(tmpDir(), 'other.sqlite');
    expect((await run(['store', 'stats', '--store', other])).out).toContain(`No result store yet at ${other}`);
  });

  it('a relative --store is resolved against the working directory', async () => {
    const r = await run(['store', 'stats', '--store', 'no-such-dir-lead-enrich/x.sqlite']);
    expect(r.out).toContain(`No result store yet at ${path.resolve('no-such-dir-lead-enrich/x.sqlite')}`);
  });

  it('a file that is not a store: ConfigError, file untouched', async () => {
    const file = path.join(tmpDir(), 'notes.sqlite');
    fs.writeFileSync(file, 'these are my notes, not a database'.repeat(200));
    const e = await runFails(['store', 'stats', '--store', file]);
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toContain(file);
    expect(fs.readFileSync(file, 'utf8')).toContain('my notes');
  });

  it('--store with no value or an empty value is refused', async () => {
    expect(await runFails(['store', 'stats', '--store'])).toBeInstanceOf(Error);
    const e = await runFails(['store', 'stats', '--store', '']);
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toContain('--store');
    expect(await runFails(['store', 'stats', '--store', ':memory:'])).toBeInstanceOf(ConfigError);
  });
});

describe('store prune', () => {
  it('removes entries older than the duration and says how many', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    const r = await run(['store', 'prune', '--older-than', '7d', '--store', file]);
    expect(r.out).toBe(`Removed 2 entries older than 7d from ${file}; 2 left.\n`);
    expect(r.status).toBeUndefined();
    const store = ResultStore.open({ path: file, readonly: true });
    try {
      expect(store.stats().byOperation).toEqual({ mx: 1, lookup_domain: 1 });
    } finally {
      store.close();
    }
    const again = await run(['store', 'prune', '--older-than', '1d 12h', '--store', file, '--json']);
    expect(JSON.parse(again.out)).toEqual({ path: file, exists: true, removed: 1, remaining: 1 });
  });

  it('nothing old enough: removes nothing', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    const r = await run(['store', 'prune', '--older-than', '52w', '--store', file]);
    expect(r.out).toBe(`Removed 0 entries older than 364d from ${file}; 4 left.\n`);
  });

  it('a bad duration is a ConfigError and the store is not touched', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    for (const bad of ['30', 'soon', '30 days', '-1d', '1M']) {
      const e = await runFails(['store', 'prune', '--older-than', bad, '--store', file]);
      expect(e, bad).toBeInstanceOf(ConfigError);
      expect(e.message).toContain('--older-than');
      expect(e.message).toContain(`'${bad}'`);
    }
    const store = ResultStore.open({ path: file, readonly: true });
    try {
      expect(store.stats().entries).toBe(4);
    } finally {
      store.close();
    }
  });

  it('a bad duration is refused before a missing store is looked at', async () => {
    const file = path.join(tmpDir(), 'none.sqlite');
    expect(await runFails(['store', 'prune', '--older-than', 'abc', '--store', file])).toBeInstanceOf(ConfigError);
  });

  it('--older-than is required', async () => {
    const e = await runFails(['store', 'prune', '--store', path.join(tmpDir(), 'x.sqlite')]);
    expect(e.message).toMatch(/older-than/);
  });

  it('a missing store: nothing to prune, and no file created', async () => {
    const file = path.join(tmpDir(), 'none.sqlite');
    const r = await run(['store', 'prune', '--older-than', '30d', '--store', file]);
    expect(r.out).toContain(`No result store yet at ${file}; nothing to prune.`);
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe('store clear', () => {
  it('removes every entry and says how many', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    const r = await run(['store', 'clear', '--store', file]);
    expect(r.out).toBe(`Removed 4 entries from ${file}.\n`);
    const j = JSON.parse((await run(['store', 'stats', '--store', file, '--json'])).out);
    expect(j).toMatchObject({ exists: true, entries: 0 });
    expect((await run(['store', 'clear', '--store', file])).out).toBe(`Removed 0 entries from ${file}.\n`);
  });

  it('one entry: singular', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE.slice(0, 1));
    expect(JSON.parse((await run(['store', 'clear', '--store', file, '--json'])).out)).toEqual({ path: file, exists: true, removed: 1 });
    populate(file, SAMPLE.slice(0, 1));
    expect((await run(['store', 'clear', '--store', file])).out).toBe(`Removed 1 entry from ${file}.\n`);
  });

  it('a missing store: nothing to clear, and no file created', async () => {
    const file = path.join(tmpDir(), 'none.sqlite');
    const r = await run(['store', 'clear', '--store', file]);
    expect(r.out).toContain(`No result store yet at ${file}; nothing to clear.`);
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe('usage', () => {
  it('a store command is required, and an unknown one is refused', async () => {
    expect((await runFails(['store'])).message).toBe('Name a store command: stats, prune or clear');
    expect(await runFails(['store', 'vacuum'])).toBeInstanceOf(Error);
  });

  it('every store command has --help with examples', async () => {
    for (const sub of [[], ['stats'], ['prune'], ['clear']]) {
      let help = '';
      const io: CliIo = { out: () => undefined, err: () => undefined, setStatus: () => undefined, isTty: false };
      // With a parse callback yargs hands over the help text instead of printing it.
      await yargs()
        .scriptName('lead-enrich')
        .command(storeCommand(io))
        .exitProcess(false)
        .parseAsync(['store', ...sub, '--help'], {}, (_err, _argv, output) => {
          help = output;
        });
      expect(help, sub.join(' ')).toContain('Examples:');
      expect(help, sub.join(' ')).toContain(`lead-enrich store ${sub[0] ?? ''}`.trim());
      if (sub.length > 0) expect(help).toContain('--store');
      if (sub[0] === 'prune') expect(help).toContain('--older-than');
    }
  });

  it('formatStoreStats: units and future timestamps', () => {
    const text = formatStoreStats(
      { path: '/x.sqlite', sizeBytes: 3 * 1024 * 1024 + 512 * 1024, entries: 1234, byOperation: { mx: 1234 }, byService: { s: 1234 }, oldest: 1000, newest: 61_000 },
      1000,
    );
    expect(text).toContain('Size          3.5 MiB');
    expect(text).toContain('Entries       1,234');
    expect(text).toContain('Oldest        1970-01-01T00:00:01.000Z (0s ago)');
    expect(text).toContain('Newest        1970-01-01T00:01:01.000Z (1m in the future)');
  });
});

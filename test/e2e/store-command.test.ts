// `lead-enrich store stats|prune|clear`, driven through yargs with a capturing CliIo.
// (src/cli/cli-process.ts runs main() when imported, so the command module is mounted here directly.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import yargs from 'yargs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/api/errors.js';
import type { Operation } from '../../src/api/types.js';
import { formatStoreStats, storeCommand, type AskUser } from '../../src/cli/store-command.js';
import type { CliIo } from '../../src/cli/io.js';
import { ResultStore } from '../../src/store/result-store.js';
import { CLI_PATH, runCli } from '../helpers/cli.js';
import { writeCsv } from '../helpers/files.js';
import { hangBound, run as runProcess, runSync } from '../helpers/processes.js';

interface Captured {
  out: string;
  err: string[];
  status: number | undefined;
}

/** Fails the test if `store clear` asks anything: only for runs that must not prompt. */
const neverAsk: AskUser = (question) => {
  throw new Error(`unexpected question: ${question}`);
};

async function run(argv: string[], ask: AskUser = () => undefined): Promise<Captured> {
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
    .command(storeCommand(io, ask))
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
      path: file,
      exists: false,
      sizeBytes: 0,
      entries: 0,
      earlierAnswers: 0,
      byOperation: {},
      byService: {},
      oldest: null,
      newest: null,
      ledger: { rows: 0, days: 0, bytes: 0 },
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
      earlierAnswers: 0,
      byOperation: { lookup_email: 2, mx: 1, lookup_domain: 1 },
      byService: { sandbox: 3, 'https://api.example.com/v2': 1 },
      oldest,
      newest,
      ledger: { rows: 0, days: 0, bytes: expect.any(Number) },
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
    expect(JSON.parse(again.out)).toEqual({ path: file, exists: true, removed: 1, remaining: 1, removedEarlier: 0 });
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
    const r = await run(['store', 'clear', '--store', file, '--yes'], neverAsk);
    expect(r.out).toBe(`Removed 4 entries from ${file}.\n`);
    const j = JSON.parse((await run(['store', 'stats', '--store', file, '--json'])).out);
    expect(j).toMatchObject({ exists: true, entries: 0 });
    // Nothing to delete: nothing to confirm.
    expect((await run(['store', 'clear', '--store', file], neverAsk)).out).toBe(`Removed 0 entries from ${file}.\n`);
  });

  it('one entry: singular', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE.slice(0, 1));
    expect(JSON.parse((await run(['store', 'clear', '--store', file, '--json', '--yes'])).out)).toEqual({
      path: file,
      exists: true,
      removed: 1,
      ledger: { credits: 0, calls: 0 },
    });
    populate(file, SAMPLE.slice(0, 1));
    expect((await run(['store', 'clear', '--store', file, '-y'])).out).toBe(`Removed 1 entry from ${file}.\n`);
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
    expect((await runFails(['store'])).message).toBe('Name a store command: stats, prune, clear, check, export, show or spend');
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
      {
        path: '/x.sqlite',
        sizeBytes: 3 * 1024 * 1024 + 512 * 1024,
        entries: 1234,
        byOperation: { mx: 1234 },
        byService: { s: 1234 },
        oldest: 1000,
        newest: 61_000,
      },
      1000,
    );
    expect(text).toContain('Size          3.5 MiB');
    expect(text).toContain('Entries       1,234');
    expect(text).toContain('Oldest        1970-01-01T00:00:01.000Z (0s ago)');
    expect(text).toContain('Newest        1970-01-01T00:01:01.000Z (1m in the future)');
  });
});

/** Entries per service in `file`, read through the store's own API. */
function byService(file: string): Record<string, number> {
  const store = ResultStore.open({ path: file, readonly: true });
  try {
    return store.stats().byService;
  } finally {
    store.close();
  }
}

const API = 'https://api.example.com/v2';

describe('store clear: confirmation', () => {
  it('without a terminal and without --yes: nothing deleted, one line that says to pass --yes', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    const error = await runFails(['store', 'clear', '--store', file]);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(`Not clearing ${file} (4 entries): there is no terminal to confirm in; pass --yes to clear it`);
    expect(byService(file)).toEqual({ sandbox: 3, [API]: 1 });
  });

  it('in a terminal: asks with the count and the file, and deletes only on yes', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    const questions: string[] = [];
    const answering =
      (answer: string): AskUser =>
      (question) => {
        questions.push(question);
        return Promise.resolve(answer);
      };
    for (const no of ['', 'n', 'no', 'yess', 'maybe']) {
      const r = await run(['store', 'clear', '--store', file], answering(no));
      expect(r.status, `answer '${no}'`).toBe(1);
      expect(r.err).toEqual([
        expect.stringMatching(
          new RegExp(`^\\d{4}-[\\d-]+T[\\d:.]+Z lead-enrich: not confirmed: nothing was deleted from ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`),
        ),
      ]);
      expect(r.out).toBe('');
    }
    expect(byService(file)).toEqual({ sandbox: 3, [API]: 1 });
    expect(questions[0]).toBe(`Delete 4 entries from ${file}? Later runs pay again for these lookups. [y/N] `);
    const r = await run(['store', 'clear', '--store', file], answering(' Y '));
    expect(r.status).toBeUndefined();
    expect(r.out).toBe(`Removed 4 entries from ${file}.\n`);
    expect(byService(file)).toEqual({});
  });

  it('--yes does not ask', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    expect((await run(['store', 'clear', '--store', file, '--yes'], neverAsk)).out).toBe(`Removed 4 entries from ${file}.\n`);
  });

  // A real terminal needs util-linux's `script` (it gives the CLI a pseudo-terminal). Skipped only
  // where it is missing (it is there on Debian and in CI); the no-terminal refusal and --yes are
  // tested above without it.
  const hasScript = runSync('script', ['--version']).status === 0;

  /** The built CLI in a real pseudo-terminal (util-linux `script`), `typed` sent as keystrokes. */
  function inTerminal(args: string[], typed: string): Promise<{ code: number | null; output: string }> {
    const command = [process.execPath, CLI_PATH, ...args].map((a) => `'${a}'`).join(' ');
    return runProcess('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH, HOME: os.tmpdir() }, input: typed, timeoutMs: 20_000 }).then(
      (r) => ({ code: r.code, output: r.stdout + r.stderr }),
    );
  }

  // Skipped only without util-linux `script` (see hasScript above): runs here and in CI.
  it.skipIf(!hasScript)(
    'in a real terminal: n keeps everything (exit 1), y clears',
    { meta: { skipReason: 'no util-linux script on PATH (Debian: bsdutils)' } },
    async () => {
      const file = path.join(tmpDir(), 'results.sqlite');
      populate(file, SAMPLE);
      const no = await inTerminal(['store', 'clear', '--store', file], 'n\n');
      expect(no.output).toContain(`Delete 4 entries from ${file}?`);
      expect(no.output).toContain('lead-enrich: not confirmed: nothing was deleted');
      expect(no.code).toBe(1);
      expect(byService(file)).toEqual({ sandbox: 3, [API]: 1 });
      const yes = await inTerminal(['store', 'clear', '--store', file], 'y\n');
      expect(yes.output).toContain(`Removed 4 entries from ${file}.`);
      expect(yes.code).toBe(0);
      expect(byService(file)).toEqual({});
    },
    hangBound(30_000),
  );
});

describe('--service: one API only', () => {
  it('clear removes only that service, given as --base-url would be (trailing slash and all)', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    const r = await run(['store', 'clear', '--store', file, '--service', 'HTTPS://api.example.com/v2/', '--yes']);
    expect(r.out).toBe(`Removed 1 entry of ${API} from ${file}.\n`);
    expect(byService(file)).toEqual({ sandbox: 3 });
    const j = JSON.parse((await run(['store', 'clear', '--store', file, '--service', 'sandbox', '--yes', '--json'])).out);
    expect(j).toEqual({ path: file, service: 'sandbox', exists: true, removed: 3, ledger: { credits: 0, calls: 0 } });
  });

  it('the question names the service and counts its entries only', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    let asked = '';
    await run(['store', 'clear', '--store', file, '--service', 'sandbox'], (question) => {
      asked = question;
      return Promise.resolve('n');
    });
    expect(asked).toBe(`Delete 3 entries of sandbox from ${file}? Later runs pay again for these lookups. [y/N] `);
  });

  it('stats counts that service only; a service never stored has 0 entries', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    const j = JSON.parse((await run(['store', 'stats', '--store', file, '--service', 'sandbox', '--json'])).out);
    expect(j).toMatchObject({ service: 'sandbox', entries: 3, byOperation: { lookup_email: 2, mx: 1 }, byService: { sandbox: 3 } });
    expect(j.newest).toBe(new Date(NOW - 2 * DAY).toISOString());
    const text = (await run(['store', 'stats', '--store', file, '--service', 'https://other.example.com/v2'])).out;
    expect(text).toMatch(/^Service +https:\/\/other\.example\.com\/v2 /m);
    expect(text).toMatch(/^Entries +0$/m);
  });

  it('prune removes old entries of that service only', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, [...SAMPLE, { service: API, op: 'lookup_domain', key: 'old.com', ageDays: 50 }]);
    const j = JSON.parse((await run(['store', 'prune', '--store', file, '--older-than', '30d', '--service', API, '--json'])).out);
    expect(j).toEqual({ path: file, service: API, exists: true, removed: 1, remaining: 1, removedEarlier: 0 });
    // The sandbox's 40-day-old entry is still there.
    expect(byService(file)).toEqual({ sandbox: 3, [API]: 1 });
  });

  it('a --service that is not an API base URL is refused before the store is touched', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    for (const bad of ['api.example.com', 'https://api.example.com/v1', 'https://user:secret@api.example.com/v2']) {
      const error = await runFails(['store', 'clear', '--store', file, '--service', bad, '--yes']);
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toMatch(/^Invalid option --service: must be an API base URL ending in \/v2 \(as given to --base-url\) or 'sandbox', got '/);
      expect(error.message).not.toContain('secret');
    }
    expect(byService(file)).toEqual({ sandbox: 3, [API]: 1 });
  });
});

describe('the sandbox has a store of its own', () => {
  let xdg: string | undefined;
  beforeEach(() => {
    xdg = process.env.XDG_CACHE_HOME;
  });
  afterEach(() => {
    if (xdg === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = xdg;
  });

  it('store commands with --sandbox look at results.sandbox.sqlite beside the default store', async () => {
    const cache = tmpDir();
    delete process.env.LEAD_ENRICH_STORE;
    process.env.XDG_CACHE_HOME = cache;
    const sandboxFile = path.join(cache, 'lead-enrich', 'results.sandbox.sqlite');
    populate(sandboxFile, SAMPLE.slice(0, 1));
    expect(JSON.parse((await run(['store', 'stats', '--sandbox', '--json'])).out)).toMatchObject({ path: sandboxFile, entries: 1 });
    expect(JSON.parse((await run(['store', 'stats', '--json'])).out)).toMatchObject({
      path: path.join(cache, 'lead-enrich', 'results.sqlite'),
      exists: false,
    });
  });

  it(
    'enrich --sandbox stores beside the default store, never in it; --store and LEAD_ENRICH_STORE still win',
    async () => {
      const cache = tmpDir();
      const dir = tmpDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['jane@acme.com'], ['joe@acme.com']]);
      const run = (extra: string[], env: Record<string, string | undefined>) =>
        runCli(['enrich', input, '--sandbox', '-o', path.join(dir, 'out.csv'), '--quiet', ...extra], {
          env: { XDG_CACHE_HOME: cache, LEAD_ENRICH_STORE: undefined, ...env },
        });
      const r = await run([], {});
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(fs.readdirSync(path.join(cache, 'lead-enrich'))).toContain('results.sandbox.sqlite');
      expect(fs.existsSync(path.join(cache, 'lead-enrich', 'results.sqlite'))).toBe(false);
      expect(byService(path.join(cache, 'lead-enrich', 'results.sandbox.sqlite'))).toEqual({ sandbox: 2 });

      const explicit = path.join(dir, 'mine.sqlite');
      expect((await run(['--store', explicit], {})).code).toBe(0);
      expect(byService(explicit)).toEqual({ sandbox: 2 });
      const fromEnv = path.join(dir, 'env.sqlite');
      expect((await run([], { LEAD_ENRICH_STORE: fromEnv })).code).toBe(0);
      expect(byService(fromEnv)).toEqual({ sandbox: 2 });
      expect(fs.existsSync(path.join(cache, 'lead-enrich', 'results.sqlite'))).toBe(false);
    },
    hangBound(60_000),
  );

  it('enrich --help says where the sandbox keeps its answers', async () => {
    const r = await runCli(['enrich', '--help']);
    expect(r.stdout).toContain('results.sandbox.sqlite');
  });
});

describe('the ledger in the store commands (one service apart from another)', () => {
  const REAL = 'https://api.example.com/v2';
  const REHEARSAL = 'http://127.0.0.1:47812/v2';

  /** Charges recorded as a run records them: [service, ISO time, credits] each. */
  function charged(file: string, charges: Array<[string, string, number]>): void {
    const store = ResultStore.open({ path: file });
    for (const [service, iso, credits] of charges)
      store.settle({ hold: undefined, charge: { at: Date.parse(iso), service, op: 'lookup_email', credits, runId: 'run-1' } });
    store.close();
  }

  function ledgerRows(file: string): Array<[string, number]> {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      const statement = db.prepare('SELECT service, sum(credits) FROM ledger_totals GROUP BY service ORDER BY service');
      statement.setReturnArrays(true);
      return statement.all() as unknown as Array<[string, number]>;
    } finally {
      db.close();
    }
  }

  const today = () => new Date().toISOString().slice(0, 10);

  it('store spend shows each service apart, --service one; days and months of every service together in --json', async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    const now = new Date().toISOString();
    charged(file, [
      [REAL, now, 8],
      [REAL, now, 6],
      [REHEARSAL, now, 14],
    ]);
    const text = (await run(['store', 'spend', '--store', file])).out;
    expect(text).toContain(`${REHEARSAL}\n  Per day, the last 31 days with any:\n    ${today()}  14 credits  (1 charged lookup)`);
    expect(text).toContain(`${REAL}\n  Per day, the last 31 days with any:\n    ${today()}  14 credits  (2 charged lookups)`);
    const all = JSON.parse((await run(['store', 'spend', '--store', file, '--json'])).out);
    expect(all.days).toEqual([{ day: today(), credits: 28, calls: 3, lapsed: 0 }]);
    expect(all.services.map((s: { service: string }) => s.service)).toEqual([REHEARSAL, REAL].sort());
    const one = JSON.parse((await run(['store', 'spend', '--store', file, '--json', '--service', `${REAL}/`])).out);
    expect(one).toMatchObject({ service: REAL, days: [{ day: today(), credits: 14, calls: 2, lapsed: 0 }], services: [{ service: REAL, budgets: [] }] });
  });

  it('store spend with budgets (flags, else the config file) shows what is left of each, per service', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'results.sqlite');
    charged(file, [
      [REAL, new Date().toISOString(), 30],
      [REHEARSAL, new Date().toISOString(), 500],
    ]);
    const flags = JSON.parse((await run(['store', 'spend', '--store', file, '--json', '--budget', '100/day', '--budget', '1000/month', '--budget', '50'])).out);
    const real = flags.services.find((s: { service: string }) => s.service === REAL);
    expect(real.budgets).toEqual([
      { budget: '100/day', credits: 100, per: 'day', spent: 30, left: 70, period: today() },
      { budget: '1000/month', credits: 1000, per: 'month', spent: 30, left: 970, period: today().slice(0, 7) },
    ]);
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ budget: '200/day' }), { mode: 0o600 });
    const text = (await run(['store', 'spend', '--store', file, '--config', config, '--service', REHEARSAL])).out;
    expect(text).toContain(`${REHEARSAL}\n  Budgets (UTC, by this machine's clock): 200/day: 500 spent on ${today()}, 0 left`);
    expect(text).not.toContain(REAL);
  });

  it("store spend lists a charge dated later than this machine's clock on its own day, and says so", async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    const later = new Date(Date.now() + 3 * DAY);
    charged(file, [
      [REAL, new Date().toISOString(), 4],
      [REAL, later.toISOString(), 8],
    ]);
    const j = JSON.parse((await run(['store', 'spend', '--store', file, '--json'])).out);
    expect(j.days.map((d: { day: string }) => d.day)).toEqual([today(), later.toISOString().slice(0, 10)]);
    expect(j).toMatchObject({ newestCharge: later.toISOString(), newestAhead: true });
    const text = (await run(['store', 'spend', '--store', file])).out;
    expect(text).toContain(`The newest charge is dated ${later.toISOString()}, 2d 23h`);
    expect(text).toContain("later than this machine's clock: a machine whose clock is ahead made it; it is listed on the day it is dated.");
    expect(text).toMatch(/Per month, the last 12 with any:\n( {4}\d{4}-\d\d +\d+ credits.*\n)+/);
  });

  it("store spend shows how much of a day is the worst case of a stopped run's lookups in flight, and what is held now", async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    charged(file, [[REAL, new Date().toISOString(), 6]]);
    const db = new DatabaseSync(file);
    db.prepare("INSERT INTO ledger (charged_at, service, op, credits, run_id, lapsed) VALUES (?, ?, 'lookup_email', 8, 'gone', 1)").run(Date.now(), REAL);
    db.prepare(
      "INSERT INTO spend_holds (owner, seq, pid, host, credits, made_at, expires_at, service, op) VALUES ('live', 1, 1, 'h', 12, ?, ?, ?, 'lookup_email')",
    ).run(Date.now(), Date.now() + 60_000, REAL);
    db.close();
    const text = (await run(['store', 'spend', '--store', file])).out;
    expect(text).toContain(`    ${today()}  14 credits  (2 charged lookups; 8 credits of them the worst case of lookups in flight of a run that stopped)`);
    expect(text).toContain('  Held now by lookups in flight: 12 credits');
    expect(JSON.parse((await run(['store', 'spend', '--store', file, '--json'])).out)).toMatchObject({
      held: 12,
      days: [{ credits: 14, calls: 2, lapsed: 8 }],
    });
  });

  it("store clear --service clears that service's ledger and totals too; store clear --yes the whole ledger", async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    populate(file, SAMPLE);
    charged(file, [
      [REAL, new Date().toISOString(), 14],
      [REHEARSAL, new Date().toISOString(), 20],
    ]);
    let asked = '';
    await run(['store', 'clear', '--store', file, '--service', REHEARSAL], (question) => {
      asked = question;
      return Promise.resolve('n');
    });
    expect(asked).toBe(
      `Delete 0 entries of ${REHEARSAL} and the ledger of 20 credits charged from ${file}? Later runs pay again for these lookups, and the day and month budgets no longer count those credits. [y/N] `,
    );
    expect(ledgerRows(file)).toEqual(
      [
        [REHEARSAL, 20],
        [REAL, 14],
      ].sort(),
    );
    const one = JSON.parse((await run(['store', 'clear', '--store', file, '--service', REHEARSAL, '--yes', '--json'])).out);
    expect(one).toEqual({ path: file, service: REHEARSAL, exists: true, removed: 0, ledger: { credits: 20, calls: 1 } });
    expect(ledgerRows(file)).toEqual([[REAL, 14]]);
    const db = new DatabaseSync(file, { readOnly: true });
    expect(db.prepare('SELECT count(*) AS n FROM ledger WHERE service = ?').get(REHEARSAL)).toEqual({ n: 0 });
    db.close();
    expect((await run(['store', 'clear', '--store', file, '--yes'])).out).toBe(`Removed 4 entries and the ledger of 14 credits charged from ${file}.\n`);
    expect(ledgerRows(file)).toEqual([]);
  });

  it("store stats shows the ledger's size: its per-call rows, the days it has totals for, its bytes", async () => {
    const file = path.join(tmpDir(), 'results.sqlite');
    charged(file, [
      [REAL, '2026-03-14T10:00:00Z', 4],
      [REAL, '2026-03-14T11:00:00Z', 4],
      [REHEARSAL, '2026-03-15T10:00:00Z', 4],
    ]);
    expect((await run(['store', 'stats', '--store', file])).out).toMatch(
      /^Ledger +3 charged calls kept one by one, totals for 2 days, \d+\.\d KiB \(store spend lists them\)$/m,
    );
    expect(JSON.parse((await run(['store', 'stats', '--store', file, '--json'])).out).ledger).toEqual({ rows: 3, days: 2, bytes: expect.any(Number) });
  });
});

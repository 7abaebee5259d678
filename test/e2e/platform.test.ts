// The platform: the store on node:sqlite, no warning on any supported Node, one clear
// line on an older one, and a store written by the better-sqlite3 versions still answering.
// CI runs this file on Node 22, 24 and 26 (.ci/run), each with the CLI on that same Node.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { unsupportedNode } from '../../src/core/node-version.js';
import { REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { runChecked, runSync } from '../helpers/processes.js';

const FIXTURE_STORE = path.join(REPO_ROOT, 'fixtures', 'stores', 'v3-better-sqlite3.sqlite');
// What the older Node's runs see, as runCli's do: PATH and HOME, not the machine's proxies (with
// HTTP_PROXY set, that Node is told first that it cannot use a proxy) nor its LEAD_* settings.
const CLEAN_ENV = { PATH: process.env.PATH, HOME: process.env.HOME };

describe('the Node.js versions', () => {
  it('accepts 22.16 and later 22s, and 24 and later; says which versions it needs to an older one and to 23', () => {
    for (const version of ['22.16.0', '22.23.3', '24.0.0', '24.21.0', '26.10.0', '27.1.0']) expect(unsupportedNode(version)).toBeUndefined();
    // 23.0 has no node:sqlite without a flag, 23.11 no setReturnArrays.
    for (const version of ['22.15.1', '22.5.0', '23.0.0', '23.11.1', '20.20.2', '18.20.8']) {
      expect(unsupportedNode(version)).toBe(
        `Node.js 22.16 or a later 22, or 24 or later, is needed (22, 24 or 26), this is ${version}: install a supported Node.js and run it again`,
      );
    }
  });

  const older = olderNodeOnPath();
  // Skipped only where no Node older than 22 is on PATH: CI has the machine's own Node 20 there,
  // behind the Node it runs the tests on, so it runs in CI.
  it.skipIf(older === undefined)(
    `an older Node (${older?.version ?? 'none on PATH'}) gets one line naming the versions, exit 1, no stack`,
    { meta: { skipReason: 'no Node older than 22 on PATH' } },
    () => {
      const { status, stderr } = runSync(older!.path, [path.join(REPO_ROOT, 'dist', 'cli', 'main.js'), 'enrich', 'fixtures/contacts.csv', '--sandbox'], {
        cwd: REPO_ROOT,
        env: CLEAN_ENV,
      });
      expect(status).toBe(1);
      expect(stderr).toBe(
        `lead-enrich: Node.js 22.16 or a later 22, or 24 or later, is needed (22, 24 or 26), this is ${older!.version.slice(1)}: install a supported Node.js and run it again (code: unsupported_node)\n`,
      );
    },
  );

  // The library on the same older Node: a program gets the same sentence, as a ConfigError, where
  // the store would need what that Node lacks (not "No such built-in module: node:sqlite").
  it.skipIf(older === undefined)(
    `a program calling enrichRows on an older Node (${older?.version ?? 'none on PATH'}) gets that line as a ConfigError`,
    { meta: { skipReason: 'no Node older than 22 on PATH' } },
    () => {
      const program = `
      import { enrichRows, ConfigError } from ${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, 'dist', 'index.js')).href)};
      try {
        for await (const _ of enrichRows([{ email: 'jane@acme.com' }], { baseUrl: 'http://127.0.0.1:1/v2', token: 'a-token-of-twenty-chars', store: ':memory:' })) {}
        console.log('no error');
      } catch (error) {
        console.log(JSON.stringify({ config: error instanceof ConfigError, code: error.code, message: error.message }));
      }`;
      const printed = runChecked(older!.path, ['--input-type=module', '-e', program], { cwd: REPO_ROOT, env: CLEAN_ENV });
      expect(JSON.parse(printed)).toEqual({
        config: true,
        code: 'config',
        message: `Node.js 22.16 or a later 22, or 24 or later, is needed (22, 24 or 26), this is ${older!.version.slice(1)}: install a supported Node.js and run it again`,
      });
    },
  );
});

describe(`the README's main command on this Node (${process.version})`, () => {
  it('exits 0, writes the output, and prints no warning (none from node:sqlite either)', async () => {
    const dir = tempDir();
    fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'contacts.csv'), path.join(dir, 'contacts.csv'));
    const r = await runCli(['enrich', 'contacts.csv', '--sandbox'], { cwd: dir, env: { LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') } });
    expect(r.code).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'contacts.enriched.csv'), 'utf8')).toMatch(/^first_name,last_name,email,.*,lead_status,/);
    expect(r.stderr).not.toMatch(/warning/i);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('a store written by an earlier version (better-sqlite3, schema v3)', () => {
  it('is opened as it is, and no key it holds is requested again', async () => {
    const dir = tempDir();
    const store = path.join(dir, 'store.sqlite');
    // fixtures/README.md: made by a732caf from contacts.csv (with mx, whois, company), companies.csv and profiles.csv.
    fs.copyFileSync(FIXTURE_STORE, store);
    for (const [file, extra] of [
      ['contacts.csv', ['--with', 'mx,whois,company']],
      ['companies.csv', []],
      ['profiles.csv', []],
    ] as const) {
      const r = await runCli(
        ['enrich', path.join(REPO_ROOT, 'fixtures', file), ...extra, '--sandbox', '--store', store, '-o', path.join(dir, `${file}.out.csv`), '--json'],
        {},
      );
      const summary = JSON.parse(r.stdout) as {
        requests: number;
        billing: Record<string, number>;
        status: Record<string, number>;
        errorCodes: Record<string, number>;
      };
      // companies.csv has one malformed domain: its only error, made without a request.
      expect(summary.status.error, r.stderr).toBe(summary.errorCodes.invalid_input ?? 0);
      expect(summary.requests).toBe(0);
      expect(summary.billing.charged + summary.billing.free).toBe(0);
      expect(summary.billing.cached).toBeGreaterThan(0);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

/** A `node` on PATH older than 22, other than the one running the tests. */
function olderNodeOnPath(): { path: string; version: string } | undefined {
  const self = fs.realpathSync(process.execPath);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'node');
    try {
      if (fs.realpathSync(candidate) === self) continue;
      const version = runChecked(candidate, ['--version']).trim();
      if (Number(version.slice(1).split('.')[0]) < 22) return { path: candidate, version };
    } catch {
      // not there, or not runnable
    }
  }
  return undefined;
}

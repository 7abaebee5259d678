// The paths a new user walks from a fresh clone, with the npm on
// the PATH (npm 12 by default; .ci/run runs this layer again with npm 11 on Node 22):
// - the README's first command, `npm install && npx lead-enrich enrich fixtures/contacts.csv
//   --sandbox`, works in a clone where dist/ does not exist yet;
// - `npm pack` leaves `git status` clean (the tarball ignored, package.json not rewritten);
// - `npm install -g` of that tarball says no word about install scripts: the packed manifest
//   holds none (npm 12 blocks and lists preinstall, install, postinstall and prepare);
// - the README's crontab, run as cron runs it (an environment holding only PATH=/usr/bin:/bin,
//   HOME, SHELL and LOGNAME, then the crontab's own NAME=value lines), runs the installed command.
// The clone is of the working tree as it is (every file git tracks or would track), committed in
// a repository of its own. Nothing comes from outside 127.0.0.1: npm installs from a registry the
// test starts there holding this checkout's dependencies (test/helpers/local-registry.ts), through
// an npm cache of the test's own, any other host sent to a proxy that is not there. Its tarballs
// are packed from node_modules, not the public registry's bytes, so the clone's lockfile carries
// their integrity (its versions unchanged); that the public tarballs match the lockfile's own is
// what `npm ci` checked when it filled node_modules.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { codeBlocks, readDocument, section } from '../helpers/docs.js';
import { offlineNpm, pinLockfile, registryMissing, startLocalRegistry, type LocalRegistry } from '../helpers/local-registry.js';
import { hangBound, type ProcessResult, run as runProcess } from '../helpers/processes.js';

/** `file ARGS` in `cwd` with the environment `env` (and the suite's marks), to its end. */
function run(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<ProcessResult> {
  return runProcess(file, args, { cwd, env, timeoutMs: Infinity });
}

/** The working tree's files as git sees them, committed in a new repository at `dir`. */
async function cloneWorkingTree(dir: string, registry: LocalRegistry): Promise<void> {
  const listed = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], REPO_ROOT, process.env);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    const from = path.join(REPO_ROOT, file);
    if (!fs.existsSync(from)) continue; // deleted in the working tree, not yet committed
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.copyFileSync(from, path.join(dir, file));
    fs.chmodSync(path.join(dir, file), fs.statSync(from).mode);
  }
  pinLockfile(path.join(dir, 'package-lock.json'), registry);
  const git = (...args: string[]) => run('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], dir, process.env);
  for (const args of [
    ['init', '-q'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'clone'],
  ]) {
    const r = await git(...args);
    if (r.code !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  }
}

/** The README's crontab: its NAME=value lines, and the command after the five time fields. */
function crontab(): { variables: Record<string, string>; command: string } {
  const lines = codeBlocks(section('README.md', 'Recipes'), 'cron')[0]!.split('\n');
  const variables = Object.fromEntries(lines.filter((l) => /^[A-Z_]+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  const line = lines.find((l) => /^[\d*]/.test(l))!;
  // In a crontab `\%` is a `%` (cron hands the rest of the line to sh).
  return { variables, command: line.split(/\s+/).slice(5).join(' ').replace(/\\%/g, '%') };
}

const EXAMPLE_URL = 'https://lead-api.example/v2';
let dir: string;
let clone: string;
let globalBin: string;
let home: string;
let sandbox: Sandbox;
let registry: LocalRegistry | undefined;
const ran: Record<'first' | 'pack' | 'status' | 'install', ProcessResult> = {} as never;
/** What npm asked the registry on 127.0.0.1 for that it does not hold, by step. */
const unheld: Record<'first' | 'install', string[]> = { first: [], install: [] };
let manifest: { scripts?: Record<string, string> };

// Skipped only where node_modules lacks a dependency the lockfile lists (the registry on
// 127.0.0.1 serves those, packed from there): the clone's install cannot be made offline then.
const OFFLINE_MISSING = registryMissing(REPO_ROOT, 'all');

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, rpm: 60_000 });
  dir = tempDir('lead-enrich-clone-');
  clone = path.join(dir, 'clone');
  home = path.join(dir, 'home');
  fs.mkdirSync(path.join(home, '.config', 'lead-enrich'), { recursive: true });
  fs.writeFileSync(path.join(home, '.config', 'lead-enrich', 'token'), `${sandbox.token}\n`);
  if (OFFLINE_MISSING !== undefined) return;
  registry = await startLocalRegistry(REPO_ROOT, tempDir('lead-enrich-registry-'), 'all');
  await cloneWorkingTree(clone, registry);
  // HOME holds no .npmrc: no npm setting of the machine's applies.
  const npmEnv = { PATH: process.env.PATH, HOME: home, ...offlineNpm(registry, tempDir('lead-enrich-npm-cache-')) };
  const first = codeBlocks(readDocument('README.md'), 'sh')[0]!;
  ran.first = await run('sh', ['-ec', first], clone, npmEnv);
  unheld.first = registry.missing.splice(0);
  ran.pack = await run('npm', ['pack'], clone, npmEnv);
  ran.status = await run('git', ['status', '--porcelain'], clone, npmEnv);
  const tarball = ran.pack.stdout.trim().split('\n').pop()!;
  const unpacked = await run('tar', ['-xzOf', tarball, 'package/package.json'], clone, npmEnv);
  manifest = JSON.parse(unpacked.stdout);
  const prefix = path.join(dir, 'global');
  ran.install = await run('npm', ['install', '-g', '--prefix', prefix, `./${tarball}`], clone, npmEnv);
  unheld.install = registry.missing.splice(0);
  globalBin = path.join(prefix, 'bin');
  // A Node installed from its tarball has node in the same bin folder as the global commands.
  fs.symlinkSync(process.execPath, path.join(globalBin, 'node'));
  // Packing the dependencies, the clone's install and build, npm pack and the global install:
  // 35 s measured alone with Node 26 + npm 12, 55 s with Node 22 + npm 11; room for a loaded machine.
}, hangBound(600_000));

afterAll(async () => {
  await sandbox?.close();
  await registry?.close();
});

// Skipped where node_modules lacks a dependency the lockfile lists (OFFLINE_MISSING, above).
describe.skipIf(OFFLINE_MISSING !== undefined)('a fresh clone', { meta: { skipReason: OFFLINE_MISSING } }, () => {
  it("runs the README's first command: npm install builds dist/, npx finds the command", () => {
    expect(ran.first.code, ran.first.stderr).toBe(0);
    expect(unheld.first, 'asked of the registry on 127.0.0.1, which holds every package the lockfile lists for this platform').toEqual([]);
    expect(fs.readFileSync(path.join(clone, 'fixtures', 'contacts.enriched.csv'), 'utf8')).toMatch(/lead_status/);
  });

  it('is left clean by npm pack: the tarball is ignored and package.json is not rewritten', () => {
    expect(ran.pack.code, ran.pack.stderr).toBe(0);
    expect(ran.status.stdout).toBe('');
  });

  it('packs a manifest without install scripts (npm 12 would block and list them)', () => {
    const scripts = manifest.scripts ?? {};
    expect(Object.keys(scripts).filter((name) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(name))).toEqual([]);
  });

  it('installs the tarball globally without a word about install scripts', () => {
    expect(ran.install.code, ran.install.stderr).toBe(0);
    expect(unheld.install, 'asked of the registry on 127.0.0.1, which holds every production dependency').toEqual([]);
    expect(`${ran.install.stdout}\n${ran.install.stderr}`).not.toMatch(/install.?scripts|allowScripts|blocked/i);
    expect(fs.existsSync(path.join(globalBin, 'lead-enrich'))).toBe(true);
  });
});

describe("the README's crontab, run as cron runs it", () => {
  /** cron's environment: PATH=/usr/bin:/bin and little else, then the crontab's variables. */
  async function cron(variables: Record<string, string>): Promise<ProcessResult & { dir: string }> {
    const work = tempDir('lead-enrich-cron-');
    fs.writeFileSync(path.join(work, 'contacts.csv'), 'email\nann@acme.com\nben@acme.com\n');
    const { command } = crontab();
    const line = command.replace('cd /data/exports', `cd ${work}`).replace(EXAMPLE_URL, sandbox.baseUrl);
    const assignments = Object.entries(variables).map(([name, value]) => `${name}=${value}`);
    const env = ['-i', 'PATH=/usr/bin:/bin', `HOME=${home}`, 'SHELL=/bin/sh', 'LOGNAME=cron', `LEAD_ENRICH_STORE=${path.join(work, 'store.sqlite')}`];
    const r = await run('env', [...env, ...assignments, '/bin/sh', '-c', line], work, {});
    return { ...r, dir: work };
  }

  it('sets PATH, saying why: cron gives /usr/bin:/bin', () => {
    const block = codeBlocks(section('README.md', 'Recipes'), 'cron')[0]!;
    expect(crontab().variables.PATH).toMatch(/^\/usr\/local\/bin:/);
    expect(block).toMatch(/\/usr\/bin:\/bin/);
  });

  // Skipped as the fresh clone's tests are (OFFLINE_MISSING): it runs what they installed.
  it.skipIf(OFFLINE_MISSING !== undefined)(
    'runs the installed command and is silent (nothing to mail) when every row is enriched',
    { timeout: 60_000, meta: { skipReason: OFFLINE_MISSING } },
    async () => {
      const { variables } = crontab();
      const r = await cron({ ...variables, PATH: variables.PATH!.replace('/usr/local/bin', globalBin) });
      expect(r, r.stderr).toMatchObject({ code: 0, stdout: '', stderr: '' });
      expect(fs.readFileSync(path.join(r.dir, 'contacts.enriched.csv'), 'utf8')).toMatch(/^email,lead_status/);
      // Not a word on stderr either (on Node 22, no ExperimentalWarning for node:sqlite).
      expect(fs.readFileSync(path.join(r.dir, 'last-run.err'), 'utf8')).toBe('');
    },
  );

  it(
    "does not run without the crontab's PATH line: cron mails why (the check can fail)",
    async () => {
      const { PATH: _path, ...others } = crontab().variables;
      const r = await cron(others);
      expect(r.stdout).toMatch(/lead-enrich: not found|Node\.js .* is needed/);
      expect(fs.existsSync(path.join(r.dir, 'contacts.enriched.csv'))).toBe(false);
    },
    hangBound(60_000),
  );
});

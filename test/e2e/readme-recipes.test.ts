// The README's first run and recipes run as written, in a fresh folder: the first run's and the
// CRM export's, workbook's and filling blanks' shell blocks through sh -e, the cron line through sh,
// the CI step's `run:` script through sh -e, each with the sandbox standing in for the real API
// (its URL and token put where the recipe names them) and the built CLI on the PATH as
// `lead-enrich`; the CI step installs the packed tarball itself, as written, with a runner's
// variables (GITHUB_ACTIONS, GITHUB_WORKSPACE, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT): its
// dependencies are in the tarball, and the registry on 127.0.0.1 holding this checkout's
// (test/helpers/local-registry.ts), there should it be asked, is asked nothing: no network.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CLI_PATH, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { codeBlocks, section } from '../helpers/docs.js';
import { offlineNpm, registryMissing, startLocalRegistry, type LocalRegistry } from '../helpers/local-registry.js';
import { hangBound, run as runProcess } from '../helpers/processes.js';
import { readStepOutputs, renderSummary } from '../helpers/ci-files.js';

interface NpmTree {
  version?: string;
  dependencies?: Record<string, NpmTree>;
}

/** Every package under lead-enrich in `npm ls --all --json --global`, as name@version. */
function installedVersions(tree: NpmTree): string[] {
  const found = new Set<string>();
  const walk = (node: NpmTree) => {
    for (const [name, child] of Object.entries(node.dependencies ?? {})) {
      found.add(`${name}@${child.version}`);
      walk(child);
    }
  };
  walk(tree.dependencies!['lead-enrich']!);
  return [...found].sort();
}

/** The lockfile's production packages (those installed here: an optional one of another platform is not), as name@version. */
function lockedVersions(): string[] {
  const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; dev?: boolean; optional?: boolean; name?: string }>;
  };
  const found = new Set<string>();
  for (const [folder, entry] of Object.entries(lock.packages)) {
    if (folder === '' || entry.dev === true || !fs.existsSync(path.join(REPO_ROOT, folder, 'package.json'))) continue;
    found.add(`${entry.name ?? folder.slice(folder.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`);
  }
  return [...found].sort();
}

const RECIPES = section('README.md', 'Recipes');
const EXAMPLE_URL = 'https://lead-api.example/v2';

function block(language: string): string {
  const found = codeBlocks(RECIPES, language)[0];
  if (found === undefined) throw new Error(`no ${language} block in the README's recipes`);
  return found;
}

/** The cron line's command (after its five time fields), as cron hands it to sh: `\%` is `%`. */
function cronCommand(): string {
  const line = block('cron')
    .split('\n')
    .find((l) => /^[\d*]/.test(l))!;
  return line.split(/\s+/).slice(5).join(' ').replace(/\\%/g, '%');
}

/** The CI step's `env:` values that are no expression (`${{ … }}`): the store's path. */
function ciEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [, name, value] of block('yaml').matchAll(/^\s+([A-Z_]+): (.+)$/gm)) if (!value!.includes('${{')) env[name!] = value!;
  return env;
}

/** The CI step's `run: |` script. */
function ciScript(): string {
  const lines = block('yaml').split('\n');
  const start = lines.findIndex((l) => /^\s+run: \|/.test(l));
  const indent = /^(\s*)/.exec(lines[start + 1]!)![1]!;
  const script: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (!l.startsWith(indent)) break;
    script.push(l.slice(indent.length));
  }
  return script.join('\n');
}

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, rpm: 60_000 });
});
afterAll(() => sandbox.close());

/**
 * A fresh folder, a HOME holding the token where the cron line reads it, and `lead-enrich` on the
 * PATH and in node_modules/.bin (where `npx lead-enrich` finds it in a checkout, with no registry).
 */
const worlds: string[] = [];
afterAll(() => {
  for (const dir of worlds) fs.rmSync(dir, { recursive: true, force: true });
});

function world(token = sandbox.token) {
  const dir = tempDir();
  worlds.push(dir);
  const home = path.join(dir, 'home');
  fs.mkdirSync(path.join(home, '.config', 'lead-enrich'), { recursive: true });
  fs.writeFileSync(path.join(home, '.config', 'lead-enrich', 'token'), `${token}\n`);
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'lead-enrich'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`, { mode: 0o755 });
  fs.mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
  fs.copyFileSync(path.join(bin, 'lead-enrich'), path.join(dir, 'node_modules', '.bin', 'lead-enrich'));
  const env = { PATH: `${bin}:${process.env.PATH}`, HOME: home, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') };
  return { dir, env };
}

/** Runs `script` in sh (killed, with what it started, when its test ends). */
function sh(script: string, cwd: string, env: Record<string, string>, flags: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runProcess('sh', [...flags, '-c', script], { cwd, env, timeoutMs: Infinity }).then(({ code, stdout, stderr }) => ({ code, stdout, stderr }));
}

const GOOD = 'email\nann@acme.com\nben@acme.com\n';
const WITH_A_BAD_KEY = 'email\nann@acme.com\nbroken@\n';

/** The files the shell recipes name, as a user would have them: exports made by the tools they name. */
function exportsFolder(dir: string): void {
  fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'contacts.csv'), path.join(dir, 'contacts.csv'));
  fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'input', 'salesforce-report-windows1252.csv'), path.join(dir, 'Contacts Report.csv'));
  fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'input', 'workbook-three-sheets.xlsx'), path.join(dir, 'contacts.xlsx'));
  fs.writeFileSync(path.join(dir, 'crm.csv'), 'Email,Title,Company\nann@acme.com,,\nben@acme.com,CTO,Acme\n');
}

const SHELL_BLOCKS = [...codeBlocks(section('README.md', 'The first run'), 'sh'), ...codeBlocks(RECIPES, 'sh')];

describe("the README's first run and shell recipes, as written", () => {
  it('are there: the first run, a CRM export, a workbook, filling blanks', () => {
    expect(SHELL_BLOCKS).toHaveLength(4);
  });

  it.each(SHELL_BLOCKS.map((code, i) => [i + 1, code] as const))(
    'block %i exits 0 and writes an enriched output and its sidecar',
    async (_n, code) => {
      const { dir, env } = world();
      exportsFolder(dir);
      const before = new Set(fs.readdirSync(dir));
      const r = await sh(code.replace(EXAMPLE_URL, sandbox.baseUrl), dir, { ...env, LEAD_API_TOKEN: sandbox.token, LEAD_API_BASE_URL: sandbox.baseUrl }, [
        '-e',
      ]);
      expect(r.code, r.stderr).toBe(0);
      const made = fs.readdirSync(dir).filter((f) => !before.has(f));
      expect(
        made.filter((f) => /enriched\.(csv|xlsx)$/.test(f)),
        made.join(', '),
      ).toHaveLength(1);
      expect(
        made.filter((f) => /\.errors\.csv$/.test(f)),
        made.join(', '),
      ).toHaveLength(1);
    },
    hangBound(60_000),
  );

  it(
    "filling blanks fills the CRM's own blank cells and keeps its columns",
    async () => {
      const { dir, env } = world();
      exportsFolder(dir);
      const fill = SHELL_BLOCKS.find((code) => code.includes('--fill'))!;
      const r = await sh(fill, dir, { ...env, LEAD_API_TOKEN: sandbox.token, LEAD_API_BASE_URL: sandbox.baseUrl }, ['-e']);
      expect(r.code, r.stderr).toBe(0);
      const [header, ann, ben] = fs.readFileSync(path.join(dir, 'crm.enriched.csv'), 'utf8').trim().split('\n');
      expect(header).toBe('Email,Title,Company,lead_status');
      expect(ann).toMatch(/^ann@acme\.com,[^,]+,[^,]+,found$/);
      expect(ben).toBe('ben@acme.com,CTO,Acme,skipped');
    },
    hangBound(60_000),
  );
});

describe('the README cron recipe, as written', () => {
  const run = (file: string, token?: string) => {
    const { dir, env } = world(token);
    fs.writeFileSync(path.join(dir, 'contacts.csv'), file);
    const command = cronCommand().replace('cd /data/exports', `cd ${dir}`).replace(EXAMPLE_URL, sandbox.baseUrl);
    return sh(command, dir, env).then((r) => ({ ...r, dir }));
  };

  it('is silent (nothing for cron to mail) when every row is enriched', async () => {
    const r = await run(GOOD);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(fs.readFileSync(path.join(r.dir, 'contacts.enriched.csv'), 'utf8')).toMatch(/lead_status/);
  });

  it("is silent too when the only errors are the file's own (exit 5): they are in the sidecar", async () => {
    const r = await run(WITH_A_BAD_KEY);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(fs.readFileSync(path.join(r.dir, 'last-run.err'), 'utf8')).toMatch(/invalid_input 1/);
  });

  it('prints one line for cron to mail when the run fails (a rejected token)', async () => {
    const r = await run(GOOD, 'not-the-token-0123456789');
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stdout).toMatch(/lead-enrich: The API rejected the token/);
  });
});

// Skipped only where node_modules lacks a production dependency (the registry serves those).
const OFFLINE_MISSING = registryMissing(REPO_ROOT);
// (the reason, OFFLINE_MISSING, names the dependencies missing from node_modules: run npm ci)
describe.skipIf(OFFLINE_MISSING !== undefined)('the README CI step, as written', { meta: { skipReason: OFFLINE_MISSING } }, () => {
  // What a CI checkout holds: the packed tarball in vendor/ (packed from this checkout's dist/,
  // without the pack scripts, which would rewrite package.json under other tests' feet).
  let tarballs: string;
  let registry: LocalRegistry;
  let npmCache: string;
  beforeAll(async () => {
    tarballs = tempDir('lead-enrich-vendor-');
    npmCache = tempDir('lead-enrich-npm-cache-');
    const packed = await runProcess('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', tarballs], {
      cwd: REPO_ROOT,
      env: { ...process.env, npm_config_update_notifier: 'false' },
      timeoutMs: 120_000,
    });
    expect(packed.code, packed.stderr).toBe(0);
    registry = await startLocalRegistry(REPO_ROOT, tempDir('lead-enrich-registry-'));
  }, hangBound(120_000));
  // Each run's folder holds a global install (its node_modules): removed after the tests.
  const made: string[] = [];
  afterAll(async () => {
    await registry?.close();
    for (const dir of [tarballs, ...made]) fs.rmSync(dir, { recursive: true, force: true });
  }, hangBound(60_000));

  const run = (file: string) => {
    const { dir, env } = world();
    made.push(dir);
    fs.mkdirSync(path.join(dir, 'data'));
    fs.writeFileSync(path.join(dir, 'data', 'contacts.csv'), file);
    fs.cpSync(tarballs, path.join(dir, 'vendor'), { recursive: true });
    // `npm install -g` puts lead-enrich in a global folder of the test's own, first on the PATH
    // (not the wrapper world() made); were npm to ask a registry for a dependency, the one on
    // 127.0.0.1 would answer, through a cache of the test's own (world()'s HOME holds no .npmrc: no
    // setting of the machine's applies). Any request for another host would go to a proxy that is
    // not there, and fail at once.
    const prefix = path.join(dir, 'global');
    const npmEnv = { npm_config_prefix: prefix, ...offlineNpm(registry, npmCache) };
    const runner = {
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: dir,
      GITHUB_STEP_SUMMARY: path.join(dir, 'step-summary.md'),
      GITHUB_OUTPUT: path.join(dir, 'step-output.txt'),
    };
    const ci = {
      ...env,
      ...ciEnv(),
      ...npmEnv,
      ...runner,
      PATH: `${path.join(prefix, 'bin')}:${process.env.PATH}`,
      LEAD_API_TOKEN: sandbox.token,
      LEAD_API_BASE_URL: sandbox.baseUrl,
    };
    return sh(ciScript(), dir, ci, ['-e']).then(async (r) => {
      expect(registry.asked, 'asked of the registry on 127.0.0.1: the tarball holds every dependency').toEqual([]);
      const installed = fs.realpathSync(path.join(prefix, 'bin', 'lead-enrich'));
      const ls = await runProcess('npm', ['ls', '--all', '--json', '--global'], { cwd: dir, env: { ...ci }, timeoutMs: 60_000 });
      // The install's node_modules is the bulk of the folder: gone at once, not in the last hook.
      fs.rmSync(prefix, { recursive: true, force: true });
      return { ...r, dir, installed, tree: JSON.parse(ls.stdout) as NpmTree };
    });
  };

  // The step run once on a good file, for the two tests that read it (what it wrote, what it installed).
  let good: ReturnType<typeof run> | undefined;
  const runGood = () => (good ??= run(GOOD));

  it('keeps the store between workflow runs and hands its counts on: the step has an id, the cache a key per run, a prefix to restore by, saved under if: always(), a later step reads steps.<id>.outputs.found', () => {
    const yaml = block('yaml');
    const id = /^\s+id: (\S+)$/m.exec(yaml)?.[1];
    expect(id).toBeDefined();
    expect(yaml).toMatch(
      /- uses: actions\/cache\/restore@v\d+\n\s+with: \{ path: \.lead-enrich, key: "lead-enrich-\$\{\{ github\.run_id \}\}-\$\{\{ github\.run_attempt \}\}", restore-keys: lead-enrich- \}/,
    );
    expect(yaml).toMatch(
      /- uses: actions\/cache\/save@v\d+\n\s+if: always\(\)\n\s+with: \{ path: \.lead-enrich, key: "lead-enrich-\$\{\{ github\.run_id \}\}-\$\{\{ github\.run_attempt \}\}" \}/,
    );
    expect(yaml).toContain(`steps.${id}.outputs.found`);
    expect(ciEnv().LEAD_ENRICH_STORE).toMatch(/^\.lead-enrich\//);
  });

  it("installs nothing by the project's name from a registry: the tarball it has", () => {
    expect(ciScript()).not.toMatch(/npm (install|i)( -g)? lead-enrich(@|\s|$)/m);
    expect(ciScript()).toMatch(/^npm install -g \.\/vendor\/lead-enrich-\*\.tgz$/m);
  });

  it(
    'passes, in a fresh folder (out/ made), with the summary and the sidecar kept, the job summary and the step outputs written, the store where the cache steps keep it',
    async () => {
      const r = await runGood();
      expect(r.code, r.stderr).toBe(0);
      expect(r.installed.startsWith(path.join(r.dir, 'global'))).toBe(true);
      const summary = JSON.parse(fs.readFileSync(path.join(r.dir, 'out', 'summary.json'), 'utf8'));
      expect(summary).toMatchObject({ rows: 2 });
      expect(fs.existsSync(path.join(r.dir, 'out', 'contacts.errors.csv'))).toBe(true);
      expect(fs.existsSync(path.join(r.dir, 'out', 'report.html'))).toBe(true);
      const outputs = readStepOutputs(fs.readFileSync(path.join(r.dir, 'step-output.txt'), 'utf8'));
      expect(outputs).toMatchObject({
        'exit-code': '0',
        rows: '2',
        found: String(summary.status.found),
        errors: '0',
        output: path.join(r.dir, 'out', 'contacts.csv'),
      });
      expect(renderSummary(fs.readFileSync(path.join(r.dir, 'step-summary.md'), 'utf8'))).toMatch(/^<h3>lead-enrich: Done: 2 rows \(exit 0\)<\/h3>/);
      // The cache steps' path holds the store: the next workflow run finds its answers there.
      const cached = /actions\/cache\/save@\S+\n.*\n\s+with: \{ path: ([^,\s]+),/.exec(block('yaml'))![1]!;
      expect(fs.existsSync(path.join(r.dir, cached, 'results.sqlite'))).toBe(true);
    },
    hangBound(120_000),
  ); // the install and two runs: 6-13 s measured at a load average of 6-8 on 2 cores

  it(
    "installs exactly the tree this checkout's tests ran: npm ls --all of the install is the lockfile's production packages, version for version",
    async () => {
      const r = await runGood();
      expect(r.code, r.stderr).toBe(0);
      expect(installedVersions(r.tree)).toEqual(lockedVersions());
    },
    hangBound(120_000),
  );

  it(
    "passes when the only errors are the file's own (exit 5 accepted)",
    async () => {
      const r = await run(WITH_A_BAD_KEY);
      expect(r.code, r.stderr).toBe(0);
      expect(r.installed.startsWith(path.join(r.dir, 'global'))).toBe(true);
      expect(JSON.parse(fs.readFileSync(path.join(r.dir, 'out', 'summary.json'), 'utf8')).errorCodes).toEqual({ invalid_input: 1 });
      expect(readStepOutputs(fs.readFileSync(path.join(r.dir, 'step-output.txt'), 'utf8'))).toMatchObject({ 'exit-code': '5', errors: '1' });
      expect(r.stderr).toContain(
        '::error file=data/contacts.csv,line=3,title=lead-enrich (invalid_input)::1 row in error with invalid_input: row 2; see out/contacts.errors.csv',
      );
    },
    hangBound(120_000),
  );
});

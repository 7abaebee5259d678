// The README's cron and CI recipes run as written (issues 21 and 24), in a fresh folder: the cron
// line through sh, the CI step's `run:` script through sh -e, each with the sandbox standing in for
// the real API (its URL and token put where the recipe names them) and the built CLI on the PATH
// as `lead-enrich` (where the recipe installs it).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CLI_PATH, REPO_ROOT, tempDir } from '../helpers/cli.js';

const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const EXAMPLE_URL = 'https://lead-api.example/v2';

function block(language: string): string {
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(README.slice(README.indexOf('## Examples: cron and CI')));
  if (!match) throw new Error(`no ${language} block in the README's recipes`);
  return match[1]!;
}

/** The cron line's command (after its five time fields), as cron hands it to sh: `\%` is `%`. */
function cronCommand(): string {
  const line = block('cron').split('\n').find((l) => /^[\d*]/.test(l))!;
  return line.split(/\s+/).slice(5).join(' ').replace(/\\%/g, '%');
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

/** A fresh folder, a HOME holding the token where the cron line reads it, and `lead-enrich` on the PATH. */
function world(token = sandbox.token) {
  const dir = tempDir();
  const home = path.join(dir, 'home');
  fs.mkdirSync(path.join(home, '.config', 'lead-enrich'), { recursive: true });
  fs.writeFileSync(path.join(home, '.config', 'lead-enrich', 'token'), `${token}\n`);
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'lead-enrich'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`, { mode: 0o755 });
  const env = { PATH: `${bin}:${process.env.PATH}`, HOME: home, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') };
  return { dir, env };
}

function sh(script: string, cwd: string, env: Record<string, string>, flags: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('sh', [...flags, '-c', script], { cwd, env }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
  });
}

const GOOD = 'email\nann@acme.com\nben@acme.com\n';
const WITH_A_BAD_KEY = 'email\nann@acme.com\nbroken@\n';

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
    const r = await run(GOOD, 'not-the-token');
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stdout).toMatch(/lead-enrich: The API rejected the token/);
  });
});

describe('the README CI step, as written', () => {
  const run = (file: string) => {
    const { dir, env } = world();
    fs.mkdirSync(path.join(dir, 'data'));
    fs.writeFileSync(path.join(dir, 'data', 'contacts.csv'), file);
    // The install line puts `lead-enrich` on the PATH; here it already is.
    const script = ciScript().replace(/^npm install -g lead-enrich$/m, 'true');
    return sh(script, dir, { ...env, LEAD_API_TOKEN: sandbox.token, LEAD_API_BASE_URL: sandbox.baseUrl }, ['-e']).then((r) => ({ ...r, dir }));
  };

  it('passes, in a fresh folder (out/ made), with the summary and the sidecar kept', async () => {
    const r = await run(GOOD);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(r.dir, 'out', 'summary.json'), 'utf8'))).toMatchObject({ rows: 2 });
    expect(fs.existsSync(path.join(r.dir, 'out', 'contacts.errors.csv'))).toBe(true);
  });

  it("passes when the only errors are the file's own (exit 5 accepted)", async () => {
    const r = await run(WITH_A_BAD_KEY);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(r.dir, 'out', 'summary.json'), 'utf8')).errorCodes).toEqual({ invalid_input: 1 });
  });
});

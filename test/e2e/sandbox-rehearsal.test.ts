// The sandbox server for rehearsals (README, "Rehearse with the sandbox server"):
// `lead-enrich sandbox --token T` accepts T, and `--token-file FILE` keeps one token across
// restarts (the file's, or a new one written there), so that a cron line reading the token from
// that file runs against every restart unchanged.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, runCli, spawnCli, tempDir, waitForOutput } from '../helpers/cli.js';
import { codeBlocks, section } from '../helpers/docs.js';
import { hangBound, type ProcessResult, run } from '../helpers/processes.js';

/** Starts `lead-enrich sandbox ARGS`, reads what it prints, asks /account/credits with `token`, and stops it. */
async function serve(args: string[], token?: string): Promise<{ printed: string; baseUrl: string; status: number | undefined; stderr: string }> {
  const child = spawnCli(['sandbox', '--port', '0', ...args]);
  try {
    const printed = await waitForOutput(child, /LEAD_API_TOKEN=.+\n/);
    const baseUrl = /LEAD_API_BASE_URL=(\S+)/.exec(printed)![1]!;
    const status = token === undefined ? undefined : (await fetch(`${baseUrl}/account/credits`, { headers: { authorization: `Bearer ${token}` } })).status;
    child.kill('SIGINT');
    const r = await child.result;
    expect(r.code, r.stderr).toBe(0);
    return { printed, baseUrl, status, stderr: r.stderr };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

describe('lead-enrich sandbox, the same token at every start', () => {
  it('--token T: accepts T, prints it, and refuses another', async () => {
    const token = 'rehearsal-token-0123456789';
    const r = await serve(['--token', token], token);
    expect(r.printed).toContain(`export LEAD_API_TOKEN=${token}\n`);
    expect(r.status).toBe(200);
    const other = await serve(['--token', token], 'another-token-0123456789');
    expect(other.status).toBe(401);
  });

  it('--token-file FILE: writes a new token there (0600) on the first start, reads it back on the next', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'config', 'lead-enrich', 'token');
    const first = await serve(['--token-file', file]);
    const token = fs.readFileSync(file, 'utf8').trim();
    expect(token.length).toBeGreaterThan(20);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    // The line to copy names the file, so it stays right after a restart.
    expect(first.printed).toContain(`export LEAD_API_TOKEN="$(cat ${file})"\n`);
    const again = await serve(['--token-file', file], token);
    expect(again.status).toBe(200);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(token);
  });

  it('--token-file with a token the user wrote there: that token', async () => {
    const file = path.join(tempDir(), 'token');
    fs.writeFileSync(file, 'my-own-rehearsal-token-42\n');
    expect((await serve(['--token-file', file], 'my-own-rehearsal-token-42')).status).toBe(200);
  });

  it('refuses --token with --token-file, and a latency it cannot read, in one line each', async () => {
    const both = await runCli(['sandbox', '--token', 'a-token-0123456789', '--token-file', path.join(tempDir(), 'token')]);
    expect(both.code).toBe(1);
    expect(both.stderr).toBe('lead-enrich: Invalid option --token-file: contradicts --token; give one of them (code: config)\n');
    const latency = await runCli(['sandbox', '--latency', '100-50']);
    expect(latency.code).toBe(1);
    expect(latency.stderr).toBe(
      "lead-enrich: Invalid option --latency: must be MS or MIN-MAX in ms with MIN <= MAX, such as 50-150, got '100-50' (code: config)\n",
    );
  });
});

describe("the README's rehearsal: the cron recipe against the sandbox server, across a restart", () => {
  /** The README's line that starts the server, as arguments of `lead-enrich`, with a free port and `home` for ~. */
  function rehearsalArgs(home: string): string[] {
    const line = codeBlocks(section('README.md', 'Rehearse with the sandbox server'), 'sh')[0]!.split('\n')[0]!;
    const words = line.replace(/#.*/, '').trim().split(/\s+/);
    expect(words.slice(0, 3)).toEqual(['npx', 'lead-enrich', 'sandbox']);
    return words.slice(2).map((word) => (word === '8080' ? '0' : word.replace(/^~/, home)));
  }

  /** The cron recipe's command, in `dir`, against `baseUrl`, with `lead-enrich` on the PATH. */
  function cron(dir: string, home: string, baseUrl: string): Promise<ProcessResult> {
    const lines = codeBlocks(section('README.md', 'Recipes'), 'cron')[0]!.split('\n');
    const command = lines
      .find((l) => /^[\d*]/.test(l))!
      .split(/\s+/)
      .slice(5)
      .join(' ')
      .replace(/\\%/g, '%');
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'lead-enrich'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`, { mode: 0o755 });
    const line = command.replace('cd /data/exports', `cd ${dir}`).replace('https://lead-api.example/v2', baseUrl);
    const env = { PATH: `${bin}:${process.env.PATH}`, HOME: home, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') };
    return run('sh', ['-c', line], { cwd: dir, env, timeoutMs: Infinity });
  }

  it(
    'runs silent against the first start and again against a restart, the token file unchanged',
    async () => {
      const home = tempDir();
      const dir = tempDir();
      for (const [n, file] of [
        [1, 'email\nann@acme.com\n'],
        [2, 'email\nben@acme.com\n'],
      ] as const) {
        const child = spawnCli(rehearsalArgs(home));
        try {
          const printed = await waitForOutput(child, /LEAD_API_TOKEN=.+\n/);
          fs.writeFileSync(path.join(dir, 'contacts.csv'), file);
          const r = await cron(dir, home, /LEAD_API_BASE_URL=(\S+)/.exec(printed)![1]!);
          expect(r, `start ${n}: ${r.stderr}`).toMatchObject({ code: 0, stdout: '', stderr: '' });
          expect(fs.readFileSync(path.join(dir, 'contacts.enriched.csv'), 'utf8')).toMatch(/,found,/);
        } finally {
          child.kill('SIGINT');
          await child.result;
        }
      }
    },
    hangBound(60_000),
  );
});

// Configuration is read only from a regular file of sensible size that nobody else may change
// (options/private-file.ts): a device, a FIFO, a 2 GB file, a config or token file that group or
// others can write or another user owns: exit 1 in one line, at once, in flat memory. A warning
// names the file given, never a link's target.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, lines, runCli, tempDir } from '../helpers/cli.js';
import { runChecked, runSync } from '../helpers/processes.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';

const startSandbox = sandboxesPerTest();
const POSIX = process.platform !== 'win32';
/** GNU time, to read the CLI's peak memory. */
const GNU_TIME = POSIX && runSync('/usr/bin/time', ['-f', '%M', 'true']).status === 0;

/** A config file of `body` at `mode` in a fresh folder. */
function configFile(body: unknown, mode = 0o600, name = 'config.json'): string {
  const file = path.join(tempDir(), name);
  fs.writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body));
  fs.chmodSync(file, mode);
  return file;
}

/** `account --config FILE`: its one line, its exit status and the time it took. */
async function accountWith(config: string, env: Record<string, string> = {}): Promise<{ code: number | null; line: string; ms: number }> {
  const started = Date.now();
  const r = await runCli(['account', '--config', config], { env, timeoutMs: 20_000 });
  expect(lines(r.stderr), r.stderr).toHaveLength(1);
  // Every refusal here is the configuration's: its line ends with that stable code, said once here.
  expect(r.stderr.trim()).toMatch(/ \(code: config\)$/);
  return { code: r.code, line: r.stderr.trim().replace(/ \(code: config\)$/, ''), ms: Date.now() - started };
}

// Run only on POSIX systems: Windows has no devices, FIFOs or mode bits of this kind.
describe.runIf(POSIX)(
  'not a regular file, or too large: refused at once, before it is read',
  { meta: { skipReason: 'Windows: no devices, FIFOs or mode bits of this kind' } },
  () => {
    it('--config /dev/zero: a device', async () => {
      const r = await accountWith('/dev/zero');
      expect(r).toMatchObject({
        code: 1,
        line: 'lead-enrich: Refusing the config file /dev/zero: it is a device, not a regular file; check the --config path',
      });
      expect(r.ms).toBeLessThan(5000);
    });

    it('a FIFO as the config file, and as the tokenFile: no writer is waited for', async () => {
      const dir = tempDir();
      const fifo = path.join(dir, 'fifo');
      runChecked('mkfifo', [fifo]);
      const asConfig = await accountWith(fifo);
      expect(asConfig).toMatchObject({
        code: 1,
        line: `lead-enrich: Refusing the config file ${fifo}: it is a FIFO (named pipe), not a regular file; check the --config path`,
      });
      const config = path.join(dir, 'config.json');
      fs.writeFileSync(config, JSON.stringify({ baseUrl: 'http://127.0.0.1:9/v2', tokenFile: 'fifo' }), { mode: 0o600 });
      const asToken = await accountWith(config);
      expect(asToken).toMatchObject({
        code: 1,
        line: 'lead-enrich: Refusing the tokenFile fifo: it is a FIFO (named pipe), not a regular file; fix "tokenFile" in the config file',
      });
      expect(Math.max(asConfig.ms, asToken.ms)).toBeLessThan(5000);
    });

    it('a 2 GB config file (sparse) and a folder', async () => {
      const big = configFile('', 0o600, 'big.json');
      fs.truncateSync(big, 2 * 1024 ** 3);
      const r = await accountWith(big);
      expect(r).toMatchObject({
        code: 1,
        line: `lead-enrich: Refusing the config file ${big}: it is larger than 1 MiB, which no config or token file is; check the --config path`,
      });
      expect(r.ms).toBeLessThan(5000);
      const folder = tempDir();
      expect((await accountWith(folder)).line).toBe(
        `lead-enrich: Refusing the config file ${folder}: it is a folder, not a regular file; check the --config path`,
      );
    });

    it('a config of 1 MiB is read (its blanks are JSON), one byte more is refused', async () => {
      const sb = await startSandbox();
      const body = JSON.stringify({ baseUrl: sb.baseUrl, token: sb.token });
      const exact = configFile(body + ' '.repeat(1024 * 1024 - body.length));
      const read = await runCli(['account', '--config', exact]);
      expect(read.code, read.stderr).toBe(0);
      const over = configFile(body + ' '.repeat(1024 * 1024 - body.length + 1));
      expect((await accountWith(over)).line).toMatch(/Refusing the config file .*: it is larger than 1 MiB/);
    });

    // Peak memory through GNU time: skipped where /usr/bin/time is not GNU's (macOS, Alpine's busybox).
    it.runIf(GNU_TIME)(
      'memory stays flat: /dev/zero and a 2 GB file cost no more than a refusal',
      { meta: { skipReason: 'no GNU time at /usr/bin/time to read the peak memory' } },
      () => {
        const big = configFile('', 0o600, 'big.json');
        fs.truncateSync(big, 2 * 1024 ** 3);
        for (const config of ['/dev/zero', big]) {
          const r = runSync('/usr/bin/time', ['-f', '%M', process.execPath, CLI_PATH, 'account', '--config', config], {
            timeoutMs: 20_000,
            env: { PATH: process.env.PATH, HOME: process.env.HOME },
          });
          const peakKb = Number(r.stderr.trim().split('\n').at(-1));
          expect(r.status).toBe(1);
          expect(peakKb).toBeLessThan(200 * 1024);
        }
      },
    );
  },
);

// Run only on POSIX systems: Windows has no mode bits or owners for the refusal to read.
describe.runIf(POSIX)('a config or token file others can change (StrictModes)', { meta: { skipReason: 'Windows: no mode bits or owners checked' } }, () => {
  it('a config file of mode 666 or 620 is refused, naming it and its mode', async () => {
    const world = configFile({ baseUrl: 'http://127.0.0.1:9/v2' }, 0o666);
    expect(await accountWith(world)).toMatchObject({
      code: 1,
      line: `lead-enrich: Refusing the config file ${world}: its mode is 0666, so everyone can change it (ssh refuses such a file too); run: chmod go-w ${world}`,
    });
    const group = configFile({ baseUrl: 'http://127.0.0.1:9/v2' }, 0o620);
    expect((await accountWith(group)).line).toContain(`Refusing the config file ${group}: its mode is 0620, so its group can change it`);
  });

  // Linux: the default file is found through XDG_CONFIG_HOME there (macOS keeps it under ~/Library).
  it.runIf(process.platform === 'linux')(
    'the default config file too: found, not named, and refused all the same',
    { meta: { skipReason: 'not Linux: the default config file is not under XDG_CONFIG_HOME' } },
    async () => {
      const home = tempDir();
      const file = path.join(home, 'lead-enrich', 'config.json');
      fs.mkdirSync(path.dirname(file));
      fs.writeFileSync(file, JSON.stringify({ baseUrl: 'http://127.0.0.1:9/v2' }));
      fs.chmodSync(file, 0o666);
      const r = await runCli(['account'], { env: { XDG_CONFIG_HOME: home } });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `lead-enrich: Refusing the config file ${file}: its mode is 0666, so everyone can change it (ssh refuses such a file too); run: chmod go-w ${file} (code: config)\n`,
      );
    },
  );

  it('a tokenFile of mode 666 is refused', async () => {
    const config = configFile({ baseUrl: 'http://127.0.0.1:9/v2', tokenFile: 'token.txt' });
    const token = path.join(path.dirname(config), 'token.txt');
    fs.writeFileSync(token, 'tok-0123456789abcdef');
    fs.chmodSync(token, 0o666);
    expect(await accountWith(config)).toMatchObject({
      code: 1,
      line: `lead-enrich: Refusing the tokenFile token.txt: its mode is 0666, so everyone can change it (ssh refuses such a file too); run: chmod go-w ${token}`,
    });
  });

  // Giving a file to another user needs root: elsewhere there is no such file to make.
  it.runIf(process.getuid?.() === 0)(
    'a config file another (non-root) user owns is refused, naming the owner and the mode',
    { meta: { skipReason: 'not root: no file can be given to another user' } },
    async () => {
      const theirs = configFile({ baseUrl: 'http://127.0.0.1:9/v2' }, 0o644);
      fs.chownSync(theirs, 65534, 65534);
      expect(await accountWith(theirs)).toMatchObject({
        code: 1,
        line: `lead-enrich: Refusing the config file ${theirs}: it belongs to another user (uid 65534, mode 0644), who can change it; use a file of your own`,
      });
    },
  );

  it('a tokenFile that is a link to a file everyone reads: the warning names the link and never says to chmod it', async () => {
    const sb = await startSandbox();
    const dir = tempDir();
    const target = path.join(dir, 'shared-token');
    fs.writeFileSync(target, sb.token);
    fs.chmodSync(target, 0o644);
    fs.symlinkSync(target, path.join(dir, 'token-link'));
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ baseUrl: sb.baseUrl, tokenFile: 'token-link' }), { mode: 0o600 });
    const r = await runCli(['account', '--config', config]);
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(
      r.stderr.endsWith(
        `lead-enrich: the tokenFile ${path.join(dir, 'token-link')} is a link to ${target}, which is readable by other users (everyone); keep the token in a file only you can read\n`,
      ),
      r.stderr,
    ).toBe(true);
    expect(r.stderr).not.toContain('chmod');
    expect(r.stderr).not.toContain(sb.token);
  });
});

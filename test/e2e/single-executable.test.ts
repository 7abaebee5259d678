// The single executable (`npm run build:exe`: exe/lead-enrich) where no Node is reachable: run with
// an environment holding only a PATH without node on it and a fresh HOME (and the suite's mark,
// test/helpers/processes.ts), from a folder outside the repository, it does what
// `node dist/cli/main.js` does. Skipped when the executable has not been built (`npm test` does
// not build it; .ci/run builds it, then runs this file). Build it from the current dist/ before
// running this file by hand.
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { run as runProcess } from '../helpers/processes.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';

const EXE = path.join(REPO_ROOT, 'exe', process.platform === 'win32' ? 'lead-enrich.exe' : 'lead-enrich');
const BUILT = fs.existsSync(EXE);
const { version } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const made: string[] = [];
function folder(): string {
  const dir = tempDir('lead-enrich-exe-');
  made.push(dir);
  return dir;
}

/** Runs `command` in `cwd` with nothing but a PATH holding no node and a HOME in `cwd` (the store's). */
async function run(command: string[], cwd: string): Promise<Run> {
  const env = { PATH: folder(), HOME: path.join(cwd, 'home') };
  const { code, stdout, stderr } = await runProcess(command[0]!, command.slice(1), { cwd, env, stdin: 'ignore', timeoutMs: 60_000 });
  return { code, stdout, stderr };
}

/** A folder outside the repository holding the demo contacts file. */
function withContacts(): string {
  const dir = folder();
  fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'contacts.csv'), path.join(dir, 'contacts.csv'));
  return dir;
}

const read = (dir: string, name: string) => fs.readFileSync(path.join(dir, name), 'utf8');

let redis: RedisServer | undefined;
afterAll(async () => {
  await redis?.stop();
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

// Skipped when exe/lead-enrich was not built (npm run build:exe): .ci/run builds it and runs this file.
describe.skipIf(!BUILT)(
  'the single executable, with no node reachable',
  { meta: { skipReason: 'the single executable is not built (npm run build:exe; .ci/run builds it)' } },
  () => {
    beforeAll(async () => {
      redis = await startRedis();
    });

    it("--version says package.json's version; --help is the npm install's", async () => {
      const dir = folder();
      const shown = await run([EXE, '--version'], dir);
      expect(shown, shown.stderr).toMatchObject({ code: 0, stdout: `${version}\n` });
      const help = await run([EXE, '--help'], dir);
      const fromNpm = await run([process.execPath, CLI_PATH, '--help'], dir);
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toBe(fromNpm.stdout);
    });

    it("enrich contacts.csv --sandbox writes the npm install's output and sidecar, byte for byte", async () => {
      const [exeDir, npmDir] = [withContacts(), withContacts()];
      const fromExe = await run([EXE, 'enrich', 'contacts.csv', '--sandbox'], exeDir);
      const fromNpm = await run([process.execPath, CLI_PATH, 'enrich', 'contacts.csv', '--sandbox'], npmDir);
      expect(fromExe.code, fromExe.stderr).toBe(0);
      expect(fromNpm.code, fromNpm.stderr).toBe(0);
      expect(fromExe.stderr).not.toMatch(/warning/i);
      expect(read(exeDir, 'contacts.enriched.csv')).toBe(read(npmDir, 'contacts.enriched.csv'));
      expect(read(exeDir, 'contacts.enriched.errors.csv')).toBe(read(npmDir, 'contacts.enriched.errors.csv'));
    });

    it('account --sandbox shows the plan and credits', async () => {
      const r = await run([EXE, 'account', '--sandbox'], folder());
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^Credits +10,000 remaining/m);
    });

    it('enrich --redis shares the run through a real redis-server', async () => {
      const dir = withContacts();
      const r = await run([EXE, 'enrich', 'contacts.csv', '--sandbox', '--redis', redis!.url, '--json', '--quiet'], dir);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ rows: 10 });
      const client = new Redis(redis!.url);
      try {
        expect(await client.dbsize(), 'the run left its limiter and answers in Redis').toBeGreaterThan(0);
      } finally {
        client.disconnect();
      }
    });

    it('reads an .xlsx input, writes an .xlsx output, and checks the store in its worker, with no warning', async () => {
      const dir = withContacts();
      fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'input', 'workbook.xlsx'), path.join(dir, 'workbook.xlsx'));
      const fromWorkbook = await run([EXE, 'enrich', 'workbook.xlsx', '--sandbox', '--quiet'], dir);
      expect(fromWorkbook.code, fromWorkbook.stderr).toBe(0);
      expect(fs.existsSync(path.join(dir, 'workbook.enriched.xlsx'))).toBe(true);
      const toWorkbook = await run([EXE, 'enrich', 'contacts.csv', '--sandbox', '--quiet', '-o', 'out.xlsx'], dir);
      expect(toWorkbook).toMatchObject({ code: 0, stderr: '' });
      expect(fs.readFileSync(path.join(dir, 'out.xlsx')).subarray(0, 2).toString()).toBe('PK');
      const check = await run([EXE, 'store', 'check', '--sandbox'], dir);
      expect(check.code, check.stderr).toBe(0);
      expect(check.stdout).toMatch(/is sound/);
    });
  },
);

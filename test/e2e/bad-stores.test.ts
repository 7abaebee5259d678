// Every `store` command on a store that is not as it should be: damaged (its pages, or its header),
// another program's SQLite file, a stored answer that is not JSON, a store others keep read-only,
// and `store export` sent into the store itself. One line naming `store check` where enrich gives
// it, never "unexpected failure"; an answer that is not JSON is looked up again, never a reason to
// give up the store.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ResultStore } from '../../src/store/result-store.js';
import { CLI_PATH, lines, runCli, tempDir } from '../helpers/cli.js';
import { emails, writeCsv } from '../helpers/files.js';
import { runSync } from '../helpers/processes.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';
import { openSqliteFile } from '../helpers/sqlite.js';
import { cannotRunAsNobody, runAsNobody, sharedFolderWithCli } from '../helpers/other-user.js';

const startSandbox = sandboxesPerTest();

/** Every store command, with the arguments it needs. */
const COMMANDS: string[][] = [
  ['stats'],
  ['stats', '--json'],
  ['export'],
  ['export', '--format', 'csv'],
  ['show', 'a0@x.example'],
  ['prune', '--older-than', '1d'],
  ['clear', '--yes'],
];

/** A store of `n` answers (mx, service "sandbox"), closed: its write-ahead log is in the file. */
function storeOf(n: number, dir = tempDir()): string {
  const file = path.join(dir, 'results.sqlite');
  const store = ResultStore.open({ path: file });
  for (let i = 0; i < n; i++)
    store.put('sandbox', 'lookup_email', `a${i}@x.example`, { found: true, data: { lead: { name: `A ${i}`, note: 'x'.repeat(200) } } }, 'run-1');
  store.close();
  return file;
}

function expectOneLine(r: { code: number | null; stderr: string }, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(1);
  expect(lines(r.stderr), r.stderr).toHaveLength(1);
  expect(r.stderr).toMatch(pattern);
  expect(r.stderr).not.toMatch(/unexpected failure|please report/);
}

describe('a damaged store', () => {
  it('its pages overwritten: every command ends with the one line a run gives, naming store check', async () => {
    const file = storeOf(300);
    const size = fs.statSync(file).size;
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.alloc(size - 4096, 0x5a), 0, size - 4096, 4096);
    fs.closeSync(fd);
    // The store's open reads its tables (the ledger's upkeep, the runs' leases), so the damage is met there.
    const input = writeCsv(path.join(tempDir(), 'in.csv'), [['email'], ...emails(2).map((e) => [e])]);
    const run = await runCli(['enrich', input, '--sandbox', '--store', file]);
    expectOneLine(
      run,
      /^lead-enrich: Cannot open the result store at .*: the database file is damaged; see what is wrong with lead-enrich store check --store '/,
    );
    for (const command of COMMANDS) {
      const r = await runCli(['store', ...command, '--store', file]);
      expectOneLine(r, /^lead-enrich: /);
      expect(r.stderr).toBe(run.stderr);
    }
    const check = await runCli(['store', 'check', '--store', file]);
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/is damaged:\n/);
  });

  it('its schema page overwritten: every command refuses to open it, naming store check', async () => {
    const file = storeOf(3);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.alloc(200, 0xab), 0, 200, 100);
    fs.closeSync(fd);
    for (const command of COMMANDS) {
      expectOneLine(
        await runCli(['store', ...command, '--store', file]),
        /^lead-enrich: Cannot open the result store at .*: the database file is damaged; see what is wrong with lead-enrich store check --store '/,
      );
    }
  });
});

describe("another program's SQLite file", () => {
  it('every command refuses it in one line and leaves it untouched; store check says it is not ours (exit 1)', async () => {
    const file = path.join(tempDir(), 'other.sqlite');
    const db = openSqliteFile(file);
    db.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('keep me')");
    db.close();
    const before = fs.readFileSync(file);
    for (const command of COMMANDS) {
      expectOneLine(await runCli(['store', ...command, '--store', file]), /it is a SQLite database but not a lead-enrich result store/);
    }
    const check = await runCli(['store', 'check', '--store', file]);
    expect(check.code).toBe(1);
    expect(check.stdout).toBe(
      `The file at ${file} is not a lead-enrich result store: it is a SQLite database of another program (its application id is not ours). It was left untouched; pass --store PATH or set LEAD_ENRICH_STORE to use another file.\n`,
    );
    const json = await runCli(['store', 'check', '--store', file, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, foreign: true });
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });
});

describe('a stored answer that is not JSON', () => {
  function spoil(file: string, keys: string[]): void {
    const db = openSqliteFile(file);
    for (const key of keys) db.run('UPDATE results SET data = \'{"lead": {"name": "cut sh\', cells = NULL WHERE key = ?', key);
    db.close();
  }

  it('store check names it and keeps the store (exit 0); show and export leave it out and say so', async () => {
    const file = storeOf(3);
    spoil(file, ['a1@x.example']);
    const check = await runCli(['store', 'check', '--store', file]);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/is sound \(.*, 3 entries\), but 1 stored answer is not JSON \(lookup_email a1@x\.example\): a run looks it up again\.\n$/);
    expect(JSON.parse((await runCli(['store', 'check', '--store', file, '--json'])).stdout)).toMatchObject({
      ok: true,
      notJson: { count: 1, examples: ['lookup_email a1@x.example'] },
    });
    const exported = await runCli(['store', 'export', '--store', file]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(
      exported.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).key),
    ).toEqual(['a0@x.example', 'a2@x.example']);
    expect(exported.stderr).toMatch(
      /lead-enrich: left out 1 stored answer that is not JSON \(lead-enrich store check --store '.*' names them; a run looks them up again\)\n$/,
    );
    const shown = await runCli(['store', 'show', 'a1@x.example', '--store', file]);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain('left out 1 stored answer that is not JSON');
    expect(shown.stderr).toContain('Nothing stored for a1@x.example');
  });

  it('a run looks it up again (one lookup, the account read as for any lookup), and keeps the rest of the store', async () => {
    const sb = await startSandbox();
    const dir = tempDir();
    const keys = emails(20, 'spoilt');
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...keys.map((k) => [k])]);
    const env = { LEAD_API_BASE_URL: sb.baseUrl, LEAD_API_TOKEN: sb.token, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') };
    const first = await runCli(['enrich', input, '-q', '--format', 'jsonl', '-o', path.join(dir, 'first.jsonl')], { env });
    expect(first.code, first.stderr).toBe(0);
    spoil(env.LEAD_ENRICH_STORE, [keys[3]!]);
    const plan = await runCli(['enrich', input, '--dry-run', '--json'], { env });
    expect(JSON.parse(plan.stdout)).toMatchObject({ lookupsToMake: 1 });
    const again = await runCli(['enrich', input, '--json', '--format', 'jsonl', '-o', path.join(dir, 'again.jsonl')], { env });
    expect(again.code, again.stderr).toBe(0);
    const summary = JSON.parse(again.stdout);
    expect(summary).toMatchObject({ rows: 20, accountRead: true, requests: 1 });
    expect(summary.billing.cached).toBe(19);
    const rows = fs
      .readFileSync(path.join(dir, 'again.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.map((row) => row.lead_status)).toEqual(
      fs
        .readFileSync(path.join(dir, 'first.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).lead_status),
    );
    expect((await runCli(['store', 'check', '--store', env.LEAD_ENRICH_STORE])).stdout).toMatch(/is sound \(.*, 20 entries\)\.\n$/);
  });
});

// A read-only folder is a POSIX matter. The reader must be a user who cannot write the folder:
// this one when not root; as root (who writes through any permission bits), the user nobody, who
// runs a copy of the CLI from a folder every user may enter (test/helpers/other-user.ts): it can
// enter neither a clone in a private folder nor the run's temporary folder.
const ROOT = process.getuid?.() === 0;
// Skipped on Windows, and as root where the user nobody cannot run the CLI copy (cannotRunAsNobody says why).
describe.skipIf(process.platform === 'win32' || (ROOT && cannotRunAsNobody !== undefined))(
  'a store in a read-only folder, itself read-only',
  { meta: { skipReason: `as root, the reader is nobody, who cannot run here: ${cannotRunAsNobody ?? 'Windows'}` } },
  () => {
    /** Runs the CLI on a store in `dir` as a user who cannot write `dir`. */
    function asReader(args: string[], dir: string, cli: string): { status: number | null; stdout: string; stderr: string } {
      if (ROOT) return runAsNobody(cli, args, dir);
      const r = runSync(process.execPath, [cli, ...args], { env: { PATH: process.env.PATH, HOME: dir }, timeoutMs: 30_000 });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    }

    it('stats, export, show and check read it (SQLite cannot make its -shm file there)', async () => {
      const shared = ROOT ? sharedFolderWithCli() : undefined;
      const cli = shared?.cli ?? CLI_PATH;
      const dir = shared === undefined ? tempDir() : fs.mkdtempSync(path.join(shared.folder, 'store-'));
      const file = storeOf(3, dir);
      fs.chmodSync(file, 0o444);
      fs.chmodSync(dir, 0o555);
      try {
        const stats = asReader(['store', 'stats', '--json', '--store', file], dir, cli);
        expect(stats.status, stats.stderr).toBe(0);
        expect(JSON.parse(stats.stdout)).toMatchObject({ entries: 3 });
        const exported = asReader(['store', 'export', '--store', file], dir, cli);
        expect(exported.status, exported.stderr).toBe(0);
        expect(exported.stdout.trim().split('\n')).toHaveLength(3);
        const shown = asReader(['store', 'show', 'a2@x.example', '--store', file], dir, cli);
        expect(shown.status, shown.stderr).toBe(0);
        expect(JSON.parse(shown.stdout)[0].answer.lead.name).toBe('A 2');
        const check = asReader(['store', 'check', '--store', file], dir, cli);
        expect(check.status, check.stderr).toBe(0);
        expect(check.stdout).toMatch(/is sound \(.*, 3 entries\)/);
        expect(fs.readdirSync(dir)).toEqual(['results.sqlite']);
      } finally {
        fs.chmodSync(dir, 0o755);
      }
    });
  },
);

describe('store export into the store itself', () => {
  it('`store export >> store.sqlite` is refused in one line; the store is untouched and sound', async () => {
    const file = storeOf(3);
    const before = fs.readFileSync(file);
    for (const into of [file, `${file}-wal`]) {
      if (!fs.existsSync(into)) fs.writeFileSync(into, '');
      const r = runSync('sh', ['-c', `"$0" "$1" store export --store "$2" >> "$3"`, process.execPath, CLI_PATH, file, into], {
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(
        `lead-enrich: Refusing to write into the result store's own file: stdout is ${into}; send it to another file (lead-enrich store export > answers.jsonl) (code: config)\n`,
      );
    }
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect((await runCli(['store', 'check', '--store', file])).stdout).toMatch(/is sound/);
  });
});

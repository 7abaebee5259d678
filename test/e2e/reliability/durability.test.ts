// Durability (cli-contract, "Durability"): a paid answer is paid once when runs overlap
// on one store, when two runs aim at one output, when a disk fills, when the store is damaged,
// and after kill -9. Every scenario runs the built CLI against the sandbox on 127.0.0.1, which
// counts what it charged per key.
import { DatabaseSync } from 'node:sqlite';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { refusalMs, runCli, spawnCli, type CliResult } from '../../helpers/cli.js';
import { emails, makeTempDir, writeCsv } from '../../helpers/files.js';
import { hangBound, runChecked } from '../../helpers/processes.js';
import { chargedTwice, closeAll, envFor, expectNoCrash, expectNoSecret, expectRowsMatchSandbox, lookupsSeen, sandbox, sigkill, until } from './support.js';

afterAll(closeAll);

function input(dir: string, keys: string[], name = 'in.csv'): string {
  return writeCsv(path.join(dir, name), [['email'], ...keys.map((k) => [k])]);
}

/** The last line a failed run wrote on stderr (its one clear line). */
function lastLine(result: CliResult): string {
  return result.stderr.trim().split('\n').at(-1) ?? '';
}

/** A tmpfs of `size` at a fresh folder, or undefined where this user may not mount one. */
function smallDisk(size: string): { dir: string; grow(size: string): void; unmount(): void } | undefined {
  const dir = makeTempDir('lead-enrich-disk-');
  try {
    runChecked('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  } catch {
    return undefined;
  }
  return {
    dir,
    grow: (bigger) => void runChecked('mount', ['-o', `remount,size=${bigger}`, dir]),
    unmount: () => void runChecked('umount', ['-l', dir]),
  };
}

const canMount = (() => {
  const probe = smallDisk('64k');
  probe?.unmount();
  return probe !== undefined;
})();

describe('two runs on one store', () => {
  it(
    'started together on one 1,500-key input (two outputs): both exit 0 and right, at most 3 keys paid twice',
    async () => {
      const s = await sandbox({ latencyMs: [2, 8] });
      const dir = makeTempDir();
      const keys = emails(1500, 'overlap');
      const file = input(dir, keys);
      const env = envFor(s, dir);
      const [a, b] = await Promise.all(
        ['a', 'b'].map((name) => runCli(['enrich', file, '-o', path.join(dir, `${name}.csv`), '--quiet'], { env, timeoutMs: 90_000 })),
      );
      for (const result of [a!, b!]) {
        expectNoCrash(result);
        expect(result.code, result.stderr).toBe(0);
      }
      expectRowsMatchSandbox(path.join(dir, 'a.csv'), keys);
      expectRowsMatchSandbox(path.join(dir, 'b.csv'), keys);
      expect(chargedTwice(s).length, chargedTwice(s).join(', ')).toBeLessThanOrEqual(3);
      // Both looked up: the work was shared, not done by one while the other waited for all of it.
      expect(lookupsSeen(s)).toBeLessThanOrEqual(1500 + 3);
    },
    hangBound(120_000),
  );

  it(
    'the second started while the first is half way: it waits for the keys the first is looking up, and pays for none twice',
    async () => {
      const s = await sandbox({ latencyMs: [5, 15] });
      const dir = makeTempDir();
      const keys = emails(600, 'later');
      const file = input(dir, keys);
      const env = envFor(s, dir);
      // Four at a time: with the automatic concurrency (rate × latency × 2), the slow answers below
      // could let the first send every key it had left while the second started, so that it charged
      // nothing after the second's balance read (a fresh clone's run on a quick machine).
      const first = spawnCli(['enrich', file, '-o', path.join(dir, 'a.csv'), '--rpm', '6000', '--concurrency', '4', '--quiet'], { env, timeoutMs: 90_000 });
      first.stdin!.end();
      await until(() => lookupsSeen(s) >= 250, '250 lookups');
      // Slow answers until the second has read the balance, however long a loaded machine takes to
      // start it: the first must still be looking up then (its 350 keys left take 2 s at full pace).
      s.setLatency([1_000, 1_200]);
      const reads = s.stats.byOperation.credits ?? 0;
      const startedAt = Date.now();
      const started = spawnCli(['enrich', file, '-o', path.join(dir, 'b.csv'), '--rpm', '6000', '--json'], { env, timeoutMs: 90_000 });
      started.stdin!.end();
      await until(() => (s.stats.byOperation.credits ?? 0) > reads, "the second run's balance read");
      s.setLatency([5, 15]);
      const second = await started.result;
      const secondEnded = Date.now() - startedAt;
      const done = await first.result;
      const firstEnded = Date.now() - startedAt;
      expect(done.code, done.stderr).toBe(0);
      expect(second.code, second.stderr).toBe(0);
      expectRowsMatchSandbox(path.join(dir, 'b.csv'), keys);
      // Said when a key is paid twice (once in a CI run, never in 32 runs here): when, against the runs' ends.
      const twice = chargedTwice(s);
      const when = twice.map((charged) => `${charged} last at ${(s.stats.chargedAt.get(charged.split(' ')[0]!) ?? 0) - startedAt} ms`);
      expect(twice, `${when.join(', ')}; the second started at 0 and ended at ${secondEnded} ms, the first at ${firstEnded} ms`).toEqual([]);
      // The second run's own spending is what it was charged, and the summary says the balance fell by more.
      const summary = JSON.parse(second.stdout) as { credits: { spent: number; fell: number; exact: boolean } };
      expect(summary.credits.exact).toBe(true);
      expect(summary.credits.fell).toBeGreaterThan(summary.credits.spent);
    },
    hangBound(120_000),
  );
});

describe('two runs on one output', () => {
  it(
    'the second exits 1 at once naming the file and the run that writes it; the first finishes right',
    async () => {
      // Answers that take 300-400 ms, two at a time, while the two runs started against it run: the
      // first holds its output for a minute if need be (at --rpm 1800 alone, its lookups fit one
      // window and were done first), however long a loaded machine takes to start the others; then
      // quick ones, and it finishes.
      const s = await sandbox({ latencyMs: [300, 400] });
      const dir = makeTempDir();
      const keys = emails(240, 'locked');
      const file = input(dir, keys);
      const out = path.join(dir, 'out.csv');
      const env = envFor(s, dir);
      const first = spawnCli(['enrich', file, '-o', out, '--rpm', '1800', '--concurrency', '2', '--quiet'], { env, timeoutMs: 60_000 });
      first.stdin!.end();
      // A condition, not a time: 15 s did not always see the run start at a load average of 19.
      await until(() => lookupsSeen(s) >= 5, '5 lookups', 45_000);
      // At once: as soon as a run refused at its start for a bad option would be (both measured now,
      // on this machine as loaded as it is), and without waiting for the first to let the output go.
      const startup = await refusalMs();
      const started = Date.now();
      const second = await runCli(['enrich', file, '-o', out], { env: envFor(s, makeTempDir()), timeoutMs: 20_000 });
      expect(Date.now() - started, `a run refused for a bad option took ${startup} ms`).toBeLessThan(2 * startup + 1_000);
      expect(first.exitCode, 'the first run ended before the second did').toBeNull();
      expect(lookupsSeen(s)).toBeLessThan(keys.length);
      expectNoCrash(second);
      expect(second.code).toBe(1);
      expect(lastLine(second)).toContain(out);
      expect(lastLine(second)).toContain(`pid ${first.pid}`);
      expect(second.stderr.trim().split('\n')).toHaveLength(1);
      // Another output but the same sidecar: refused too.
      const sidecarClash = await runCli(['enrich', file, '-o', path.join(dir, 'other.csv'), '--errors', path.join(dir, 'out.errors.csv')], {
        env: envFor(s, makeTempDir()),
        timeoutMs: 20_000,
      });
      expect(sidecarClash.code).toBe(1);
      expect(lastLine(sidecarClash)).toContain('out.errors.csv');
      expect(first.exitCode, 'the first run ended before the sidecar clash was refused').toBeNull();
      s.setLatency([2, 8]);
      const done = await first.result;
      expect(done.code, done.stderr).toBe(0);
      expectRowsMatchSandbox(out, keys);
      expect(fs.existsSync(path.join(dir, '.out.csv.lock'))).toBe(false);
    },
    hangBound(90_000),
  );

  it(
    'a lock left by a run killed with -9 is taken over at once by the same command',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const keys = emails(200, 'stale');
      const file = input(dir, keys);
      const env = envFor(s, dir);
      const args = ['enrich', file, '--rpm', '1200', '--quiet'];
      const killed = spawnCli(args, { env, timeoutMs: 60_000 });
      killed.stdin!.end();
      await until(() => lookupsSeen(s) >= 5, '5 lookups');
      await sigkill(killed);
      expect(fs.existsSync(path.join(dir, '.in.enriched.csv.lock'))).toBe(true);
      const again = await runCli(['enrich', file, '--quiet'], { env, timeoutMs: 60_000 });
      expect(again.code, again.stderr).toBe(0);
      expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys);
    },
    hangBound(90_000),
  );
});

describe("an output over the store's own files", () => {
  it(
    '--changes X.sqlite-wal while another run writes X.sqlite, that run then killed: refused in one line, the store intact, nothing paid twice',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const store = path.join(dir, 'X.sqlite');
      const wal = `${store}-wal`;
      const keys = emails(600, 'family');
      const file = input(dir, keys);
      const env = { ...envFor(s, dir), LEAD_ENRICH_STORE: store };
      const args = ['enrich', file, '-o', path.join(dir, 'out.csv'), '--concurrency', '4', '--rpm', '1200', '--quiet'];
      const writer = spawnCli(args, { env, timeoutMs: 90_000 });
      writer.stdin!.end();
      await until(() => lookupsSeen(s) >= 100, '100 lookups', 60_000);
      // From now on slow answers: the writer still runs when it is killed below, however long a loaded
      // machine takes over the five refused runs (at 1200 RPM it would be done in 25 s).
      s.setLatency(2_000);
      // The answers so far are in the log, not yet copied into the main file.
      expect(fs.statSync(wal).size).toBeGreaterThan(0);
      // The red team's construction, the store's other files, and the log through a link made before SQLite made it.
      fs.symlinkSync(`${store}-journal`, path.join(dir, 'journal-link.csv'));
      fs.symlinkSync(wal, path.join(dir, 'wal-link.csv'));
      fs.symlinkSync(wal, path.join(dir, 'wal-link.json'));
      const other = await sandbox();
      const small = input(dir, emails(5, 'other'), 'small.csv');
      const cases: Array<[string[], string]> = [
        [['--changes', wal], `--changes would overwrite the store's write-ahead log (${wal})`],
        [['--changes', `${store}-shm`], `--changes would overwrite the store's shared-memory index (${store}-shm)`],
        [['--errors', path.join(dir, 'journal-link.csv')], `--errors would overwrite the store's rollback journal (${store}-journal)`],
        [['-o', path.join(dir, 'wal-link.csv')], `--output would overwrite the store's write-ahead log (${wal})`],
        [['--report', path.join(dir, 'wal-link.json')], `--report would overwrite the store's write-ahead log (${wal})`],
      ];
      for (const [extra, line] of cases) {
        const refused = await runCli(['enrich', small, ...extra, '--json'], { env: { ...envFor(other, dir), LEAD_ENRICH_STORE: store } });
        expectNoCrash(refused);
        expect(refused.code).toBe(1);
        expect(JSON.parse(refused.stdout).error).toEqual({ code: 'config', message: `${line}: choose another path` });
      }
      expect(other.stats.requests).toBe(0);
      // Still SQLite's log (its magic number), the links still links.
      expect(fs.readFileSync(wal).readUInt32BE(0) & 0xfffffffe).toBe(0x377f0682);
      expect(fs.lstatSync(path.join(dir, 'wal-link.csv')).isSymbolicLink()).toBe(true);
      await sigkill(writer);
      s.setLatency(0);
      const checked = await runCli(['store', 'check'], { env });
      expect(checked.code, checked.stderr).toBe(0);
      // The same command, at a pace that no longer needs to outlast the refusals above (25 s more at 1200).
      const again = await runCli(
        args.map((arg) => (arg === '1200' ? '12000' : arg)),
        { env, timeoutMs: 90_000 },
      );
      expect(again.code, again.stderr).toBe(0);
      expectRowsMatchSandbox(path.join(dir, 'out.csv'), keys);
      // Paid again at most for the requests in flight at the kill (--concurrency 4).
      expect(chargedTwice(s).length, chargedTwice(s).join(', ')).toBeLessThanOrEqual(4);
      const stats = JSON.parse((await runCli(['store', 'stats', '--json'], { env })).stdout);
      expect(stats.entries).toBe(keys.length);
    },
    hangBound(120_000),
  );
});

// Skipped where this user may not mount a tmpfs (not root, or a container without the right to
// mount): CI runs as root and mounts, so it runs there; a writable stream that fails is no full disk.
describe.skipIf(!canMount)(
  'a disk that fills (a small tmpfs)',
  { meta: { skipReason: 'cannot mount a tmpfs here (needs root and the right to mount)' } },
  () => {
    it(
      'under the store: exit 1 with one line; once space is freed the same command pays again at most --concurrency keys',
      async () => {
        const disk = smallDisk('2m')!;
        try {
          const s = await sandbox({ credits: 100_000 });
          const dir = makeTempDir();
          const keys = emails(3000, 'storefull');
          const file = input(dir, keys);
          const env = { ...envFor(s, dir), LEAD_ENRICH_STORE: path.join(disk.dir, 'store.sqlite') };
          const args = ['enrich', file, '--concurrency', '4', '--quiet'];
          const full = await runCli(args, { env, timeoutMs: 90_000 });
          expectNoCrash(full);
          expect(full.code, full.stderr).toBe(1);
          expect(full.stderr.trim().split('\n')).toHaveLength(1);
          expect(lastLine(full)).toMatch(/no space left on the device/);
          expect(lastLine(full)).toContain(path.join(disk.dir, 'store.sqlite'));
          // No output that looks finished, and no partial file left.
          expect(fs.readdirSync(dir).sort()).toEqual(['in.csv']);
          const paidBefore = new Map(s.stats.charges);
          // (Every answer is a commit of its own, a few WAL pages each: a 2 MB disk holds a few dozen.)
          expect(paidBefore.size).toBeGreaterThan(20);
          expect(paidBefore.size).toBeLessThan(keys.length * 0.9);

          disk.grow('64m');
          const again = await runCli(args, { env, timeoutMs: 90_000 });
          expect(again.code, again.stderr).toBe(0);
          expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys);
          expect(chargedTwice(s).length, chargedTwice(s).join(', ')).toBeLessThanOrEqual(4);
          expectNoSecret([full.stderr, again.stderr], [dir, disk.dir]);
        } finally {
          disk.unmount();
        }
      },
      hangBound(180_000),
    );

    it(
      'under the output: one line, exit 1, the answers in flight kept in the store; the re-run pays again at most 2',
      async () => {
        const disk = smallDisk('1m')!;
        try {
          const s = await sandbox({ latencyMs: [1, 5] });
          const dir = makeTempDir();
          // Long cells make the output outgrow the disk well before the run ends.
          const keys = emails(2500, 'outfull');
          const file = writeCsv(path.join(dir, 'in.csv'), [['email', 'note'], ...keys.map((k, i) => [k, `note ${i} ${'x'.repeat(600)}`])]);
          const out = path.join(disk.dir, 'out.csv');
          const env = envFor(s, dir);
          const args = ['enrich', file, '-o', out, '--errors', path.join(dir, 'out.errors.csv'), '--quiet'];
          const full = await runCli(args, { env, timeoutMs: 90_000 });
          expectNoCrash(full);
          expect(full.code, full.stderr).toBe(1);
          expect(full.stderr.trim().split('\n')).toHaveLength(1);
          expect(lastLine(full)).toMatch(/disk is full/);
          expect(lastLine(full)).toContain(`Cannot write the output ${out}: the disk is full`);
          expect(fs.readdirSync(disk.dir)).toEqual([]);

          disk.grow('64m');
          const again = await runCli(args, { env, timeoutMs: 90_000 });
          expect(again.code, again.stderr).toBe(0);
          expectRowsMatchSandbox(out, keys);
          expect(chargedTwice(s).length, chargedTwice(s).join(', ')).toBeLessThanOrEqual(2);
        } finally {
          disk.unmount();
        }
      },
      hangBound(180_000),
    );
  },
);

describe('a damaged store', () => {
  /** A store of 400 answers, closed (checkpointed), then its pages after the first overwritten. */
  async function damagedStore(): Promise<{ dir: string; file: string; env: Record<string, string>; keys: string[] }> {
    const s = await sandbox();
    const dir = makeTempDir();
    const keys = emails(400, 'damaged');
    const file = input(dir, keys);
    const env = envFor(s, dir);
    const first = await runCli(['enrich', file, '--quiet'], { env, timeoutMs: 60_000 });
    expect(first.code, first.stderr).toBe(0);
    const store = env.LEAD_ENRICH_STORE!;
    expect(fs.existsSync(`${store}-wal`) ? fs.statSync(`${store}-wal`).size : 0).toBe(0);
    const size = fs.statSync(store).size;
    const fd = fs.openSync(store, 'r+');
    // Every page but the header's: the tables and indexes are gone, as after a bad sector run.
    const noise = Buffer.alloc(size - 4096, 0x5a);
    fs.writeSync(fd, noise, 0, noise.length, 4096);
    fs.closeSync(fd);
    return { dir, file, env, keys };
  }

  it(
    'a run that meets it stops with one line naming `store check`; `store check` says what is wrong, exit 1',
    async () => {
      const { dir, env } = await damagedStore();
      const run = await runCli(['enrich', path.join(dir, 'in.csv'), '-o', path.join(dir, 'again.csv'), '--quiet'], { env, timeoutMs: 60_000 });
      expectNoCrash(run);
      expect(run.code).toBe(1);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(lastLine(run)).toContain('lead-enrich store check');
      expect(fs.existsSync(path.join(dir, 'again.csv'))).toBe(false);

      const check = await runCli(['store', 'check', '--store', env.LEAD_ENRICH_STORE!], { timeoutMs: 30_000 });
      expect(check.code).toBe(1);
      expect(check.stdout).toContain('is damaged');
      expect(check.stdout).toContain('.damaged');
      const json = await runCli(['store', 'check', '--store', env.LEAD_ENRICH_STORE!, '--json'], { timeoutMs: 30_000 });
      expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, exists: true });
    },
    hangBound(90_000),
  );

  it(
    '`store check` of a sound store: exit 0 with its entries; of none: exit 0, nothing to check',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const env = envFor(s, dir);
      const none = await runCli(['store', 'check'], { env, timeoutMs: 30_000 });
      expect(none.code).toBe(0);
      expect(none.stdout).toContain('nothing to check');
      const run = await runCli(['enrich', input(dir, emails(30, 'sound')), '--quiet'], { env, timeoutMs: 60_000 });
      expect(run.code, run.stderr).toBe(0);
      const check = await runCli(['store', 'check', '--json'], { env, timeoutMs: 30_000 });
      expect(check.code).toBe(0);
      expect(JSON.parse(check.stdout)).toMatchObject({ ok: true, problems: [], entries: 30 });
    },
    hangBound(60_000),
  );

  it(
    '`store check` that cannot be made (another program holds the file locked) says why, never that a sound store is damaged',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const env = envFor(s, dir);
      const run = await runCli(['enrich', input(dir, emails(5, 'locked')), '--quiet'], { env, timeoutMs: 60_000 });
      expect(run.code, run.stderr).toBe(0);
      // Another program: a connection in exclusive locking mode that has written keeps every other out.
      const holder = new DatabaseSync(env.LEAD_ENRICH_STORE!);
      holder.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN IMMEDIATE; CREATE TABLE held (x); COMMIT;');
      try {
        const check = await runCli(['store', 'check', '--store', env.LEAD_ENRICH_STORE!], { timeoutMs: 30_000 });
        expect(check.code).toBe(1);
        expect(check.stdout).toBe(
          `Cannot check the result store at ${env.LEAD_ENRICH_STORE}: another program holds a lock on it; wait for it to finish, then run again.\n`,
        );
        expect(check.stdout).not.toMatch(/damaged|mv /);
      } finally {
        holder.close();
      }
    },
    hangBound(60_000),
  );
});

describe('kill -9', () => {
  it(
    'at about 40 %: no answer received more than 25 ms before the kill is paid again',
    async () => {
      const s = await sandbox({ credits: 100_000 });
      const dir = makeTempDir();
      const keys = emails(3000, 'kill9');
      const file = input(dir, keys);
      const env = envFor(s, dir);
      const args = ['enrich', file, '--concurrency', '16', '--rpm', '12000', '--quiet'];
      const child = spawnCli(args, { env, timeoutMs: 90_000 });
      child.stdin!.end();
      await until(() => lookupsSeen(s) >= 1200, '1,200 lookups', 60_000);
      const killedAt = Date.now();
      await sigkill(child);
      const answeredBefore = new Map(s.stats.chargedAt);

      const again = await runCli(args, { env, timeoutMs: 90_000 });
      expect(again.code, again.stderr).toBe(0);
      expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys);
      const twice = [...s.stats.charges].filter(([, n]) => n > 1).map(([key]) => key);
      const early = twice.filter((key) => killedAt - answeredBefore.get(key)! > 25);
      expect(early, `paid again though answered more than 25 ms before the kill (${twice.length} paid twice in all)`).toEqual([]);
      expect(twice.length).toBeLessThanOrEqual(16);
    },
    hangBound(120_000),
  );
});

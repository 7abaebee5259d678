// Scenario 2, kills: SIGKILL at several points of a run, then the same command again. The outputs
// must equal an uninterrupted run's (but for lead_billing), the sidecar byte for byte, keys paid
// at most once but for the few in flight at a kill, and a killed run must never leave a file under
// a destination name that is not complete. test/resume.test.ts covers one kill of a CSV run at
// three points; this covers JSON Lines, the sidecar, repeated kills of one job, a kill during the
// retry backoff, and kills at many moments around the final write and rename.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ResultStore } from '../../../src/store/result-store.js';
import { runCli, spawnCli, type CliResult } from '../../helpers/cli.js';
import { emails, makeTempDir, partialOf, readCsvBytes, writeCsv } from '../../helpers/files.js';
import {
  chargedTwice,
  closeAll,
  csvWithoutBilling,
  envFor,
  expectedEmail,
  expectNoCrash,
  expectNoSecret,
  jsonlWithoutBilling,
  lookupsSeen,
  sandbox,
  sigkill,
  until,
} from './support.js';
import { hangBound } from '../../helpers/processes.js';

afterAll(closeAll);

/** 60 ordinary keys plus every kind of row that ends in the sidecar or is answered for free. */
function mixedKeys(prefix: string): string[] {
  const keys = emails(60, prefix);
  return [
    ...keys.slice(0, 30),
    `reject-${prefix}@acme.com`, // 400: bad_request, never stored, asked again by every run
    'not-an-email', // invalid_input, no request
    '', // blank key: invalid_input
    `someone-notfound-${prefix}@acme.com`, // not found: free
    keys[3]!.toUpperCase(), // a duplicate in another spelling
    ...keys.slice(30),
  ];
}

function mixedInput(dir: string, keys: string[]): string {
  return writeCsv(path.join(dir, 'in.csv'), [['email', 'note'], ...keys.map((k, i) => [k, i % 9 === 0 ? `=HYPERLINK("x${i}")` : `note ${i}, "q"`])]);
}

/** The same command, uninterrupted, on a fresh store against a fresh sandbox: the reference. */
async function referenceRun(args: (input: string, output: string) => string[], input: string, output: string): Promise<CliResult> {
  const reference = await sandbox();
  const dir = path.dirname(output);
  const result = await runCli(args(input, output), { env: envFor(reference, dir), timeoutMs: 60_000 });
  expectNoCrash(result);
  return result;
}

/** A file's size, or -1 when it is not there (any more). */
function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return -1;
  }
}

function partials(dir: string): string[] {
  return fs.readdirSync(dir).filter((f) => f.endsWith('.partial'));
}

describe('kill -9, then the same command again', () => {
  it(
    'JSON Lines and its sidecar, killed three times (before the first answer, twice mid-run), equal an uninterrupted run',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const keys = mixedKeys('jsonl');
      const input = mixedInput(dir, keys);
      const output = path.join(dir, 'out.jsonl');
      const sidecar = path.join(dir, 'out.errors.csv');
      // Paced at 15 requests a second so that kills land mid-run.
      const args = (i: string, o: string) => ['enrich', i, '-o', o, '--format', 'jsonl', '--rpm', '900', '--quiet'];
      const env = envFor(s, dir);

      const killAt = [1, 20, 40];
      for (const seen of killAt) {
        const child = spawnCli(args(input, output), { env });
        child.stdin!.end();
        await until(() => lookupsSeen(s) >= seen, `${seen} lookups`);
        const killed = await sigkill(child);
        expectNoSecret([killed.stdout, killed.stderr]);
        // Nothing that looks finished: no output, no sidecar (a stale sidecar would mislead).
        expect(fs.existsSync(output), `output after the kill at ${seen}`).toBe(false);
        expect(fs.existsSync(sidecar), `sidecar after the kill at ${seen}`).toBe(false);
      }
      // The kills left only hidden partial files behind (one pair per killed process at most).
      expect(partials(dir).length).toBeLessThanOrEqual(2 * killAt.length);
      expect(partials(dir).every((f) => f.startsWith('.out.'))).toBe(true);

      const refDir = makeTempDir();
      fs.copyFileSync(input, path.join(refDir, 'in.csv'));
      const [final, ref] = await Promise.all([
        runCli(args(input, output), { env, timeoutMs: 60_000 }),
        referenceRun(args, path.join(refDir, 'in.csv'), path.join(refDir, 'out.jsonl')),
      ]);
      expectNoCrash(final);
      // The rejected and invalid keys are the only errors: the file's own problems, exit 5.
      expect(final.code, final.stderr).toBe(5);
      expect(ref.code).toBe(5);
      expect(jsonlWithoutBilling(output)).toEqual(jsonlWithoutBilling(path.join(refDir, 'out.jsonl')));
      expect(fs.readFileSync(sidecar)).toEqual(fs.readFileSync(path.join(refDir, 'out.errors.csv')));
      const lines = jsonlWithoutBilling(output) as Array<{ row: number; lead_status: string; error?: { code: string }; reason?: { code: string } }>;
      expect(lines.map((l) => l.row)).toEqual(keys.map((_, i) => i + 1));
      // An error's code under `error`, a skipped row's (no_key) under `reason`.
      expect(lines.filter((l) => l.error ?? l.reason).map((l) => (l.error ?? l.reason)!.code)).toEqual(['bad_request', 'invalid_input', 'no_key']);
      expect(lines.find((l) => l.reason)?.lead_status).toBe('skipped');

      // Paid once per key, but for the answers in flight (or not yet committed) at each kill.
      const twice = chargedTwice(s);
      expect(twice.length, twice.join(', ')).toBeLessThanOrEqual(5 * killAt.length);
      expect(Math.max(...s.stats.charges.values())).toBeLessThanOrEqual(2);
      const found = new Set(keys.filter((k) => expectedEmail(k).kind === 'found').map((k) => k.trim().toLowerCase()));
      expect(s.stats.charges.size).toBe(found.size);
      expectNoSecret([final.stdout, final.stderr], [dir]);
    },
    hangBound(90_000),
  );

  it(
    'killed during the retry backoff: the rows being retried are looked up again, none lost, faulted requests never paid',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const keys = emails(40, 'backoff');
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...keys.map((k) => [k])]);
      const args = ['enrich', input, '--rpm', '600', '--retries', '10', '--quiet'];
      const env = envFor(s, dir);
      const child = spawnCli(args, { env });
      child.stdin!.end();
      await until(() => lookupsSeen(s) >= 10, '10 lookups');
      // From now on every request fails: the run retries with a growing backoff.
      s.setFaults({ error503: 1 });
      await until(() => s.stats.faults.error503 >= 8, '8 faulted requests');
      const chargedBefore = s.stats.creditsCharged;
      await new Promise((r) => setTimeout(r, 300));
      expect(s.stats.creditsCharged).toBe(chargedBefore); // nothing answered, nothing paid meanwhile
      await sigkill(child);
      expect(fs.existsSync(path.join(dir, 'in.enriched.csv'))).toBe(false);

      s.setFaults({});
      const refDir = makeTempDir();
      fs.copyFileSync(input, path.join(refDir, 'in.csv'));
      const [resumed] = await Promise.all([
        runCli(args, { env, timeoutMs: 30_000 }),
        referenceRun((i) => ['enrich', i, '--quiet'], path.join(refDir, 'in.csv'), path.join(refDir, 'in.enriched.csv')),
      ]);
      expectNoCrash(resumed);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(csvWithoutBilling(path.join(dir, 'in.enriched.csv'))).toEqual(csvWithoutBilling(path.join(refDir, 'in.enriched.csv')));
      expect(fs.readFileSync(path.join(dir, 'in.enriched.errors.csv'))).toEqual(fs.readFileSync(path.join(refDir, 'in.enriched.errors.csv')));
      // Faulted requests cost nothing: only answers in flight at the kill may have been paid twice.
      expect(chargedTwice(s).length).toBeLessThanOrEqual(3);
      expectNoSecret([resumed.stdout, resumed.stderr], [dir]);
    },
    hangBound(60_000),
  );

  it(
    'killed at many moments around the final write and rename: a destination file, when present, is always complete',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const n = 6000;
      const keys = emails(n, 'write');
      // Every 50th row has an invalid key, so that the sidecar has content too.
      const cells = keys.map((k, i) => (i % 50 === 7 ? `bad-${i}` : k));
      const input = writeCsv(path.join(dir, 'in.csv'), [['email', 'note'], ...cells.map((k, i) => [k, `cell ${i} é`])]);
      const env = envFor(s, dir);
      // Warm the store with the sandbox's own answers, as an earlier run would have: the runs below
      // make no lookup and spend their time reading and writing.
      const store = ResultStore.open({ path: env.LEAD_ENRICH_STORE! });
      for (const k of keys) {
        const answer = expectedEmail(k);
        if (answer.kind !== 'rejected') store.put(s.baseUrl, 'lookup_email', k, { found: answer.kind === 'found', data: answer.data }, 'warm-up');
      }
      store.close();
      const args = (o: string) => ['enrich', input, '-o', o, '--format', 'jsonl', '--quiet'];

      // The uninterrupted run tells what complete files look like.
      const complete = path.join(dir, 'complete.jsonl');
      const full = await runCli(args(complete), { env, timeoutMs: 60_000 });
      expect(full.code, full.stderr).toBe(5); // invalid keys only: the file's own problem
      const completeSize = fs.statSync(complete).size;
      const completeSidecar = fs.readFileSync(path.join(dir, 'complete.errors.csv'));
      expect(lookupsSeen(s)).toBe(0);

      /** The moments to kill at: shares of the partial output written, then the renames themselves. */
      const moments: Array<{ label: string; ready: (partial: string, out: string, side: string) => boolean }> = [
        ...[0.05, 0.5, 0.9, 0.99, 1].map((share) => ({
          label: `${share * 100}% written`,
          // (The partial file may be renamed between two looks: then the moment has passed.)
          ready: (partial: string, out: string) => sizeOf(partial) >= share * completeSize || fs.existsSync(out),
        })),
        { label: 'sidecar renamed', ready: (_p: string, _o: string, side: string) => fs.existsSync(side) },
        { label: 'output renamed', ready: (_p: string, out: string) => fs.existsSync(out) },
      ];
      let killedBeforeRename = 0;
      for (const [i, moment] of moments.entries()) {
        const out = path.join(dir, `attempt-${i}.jsonl`);
        const side = path.join(dir, `attempt-${i}.errors.csv`);
        const child = spawnCli(args(out), { env });
        child.stdin!.end();
        // The temporary file's name ends in a random part: found by its pid.
        await until(() => moment.ready(partialOf(out, child.pid) ?? '', out, side) || child.exitCode !== null, moment.label, 30_000);
        child.kill('SIGKILL');
        const killed = await child.result;
        if (killed.signal === 'SIGKILL' && !fs.existsSync(out)) killedBeforeRename += 1;
        // Whatever the moment: a destination that exists is complete.
        if (fs.existsSync(out)) {
          expect(fs.statSync(out).size, `${moment.label}: output`).toBe(completeSize);
          expect(jsonlWithoutBilling(out)).toHaveLength(n);
          // The sidecar is renamed before the output: an output never comes without its sidecar.
          expect(fs.existsSync(side), `${moment.label}: output without its sidecar`).toBe(true);
        }
        if (fs.existsSync(side)) expect(fs.readFileSync(side), `${moment.label}: sidecar`).toEqual(completeSidecar);
      }
      // Most kills landed before the renames (else this test proved little). 5 %, 50 % and 90 % always
      // do; 99 % and 100 % race the rename (the last write takes the file from ~94 % to ~100 %, and
      // the rename follows within milliseconds), so they are not counted on.
      expect(killedBeforeRename).toBeGreaterThanOrEqual(3);

      // And the same command again completes the job.
      const out = path.join(dir, 'attempt-0.jsonl');
      const again = await runCli(args(out), { env, timeoutMs: 60_000 });
      expect(again.code, again.stderr).toBe(5);
      // (Buffer.equals: a deep toEqual of megabytes takes seconds.)
      expect(fs.readFileSync(out).equals(fs.readFileSync(complete))).toBe(true);
      expect(fs.readFileSync(path.join(dir, 'attempt-0.errors.csv'))).toEqual(completeSidecar);
      expect(readCsvBytes(path.join(dir, 'attempt-0.errors.csv'))).toHaveLength(1 + cells.filter((c) => c.startsWith('bad-')).length);
      expect(lookupsSeen(s)).toBe(0);
      expectNoSecret([full.stdout, full.stderr, again.stdout, again.stderr], [dir]);
    },
    hangBound(120_000),
  );
});

// Pay once per key: answers are kept in the store, a second run pays nothing, a killed run
// resumes by running the same command again, and the dry run predicts what a run spends.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LeadClient } from '../../src/lookup/lead-client.js';
import { planRun } from '../../src/run/dry-run.js';
import { enrich, type EnrichOptions } from '../../src/run/enrich.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { ResultStore } from '../../src/store/result-store.js';
import { sandboxAnswer } from '../../src/sandbox/data.js';
import { runCli, spawnCli } from '../helpers/cli.js';
import { emails, makeTempDir, partialOf, readCsvObjects, writeCsv } from '../helpers/files.js';
import { hangBound } from '../helpers/processes.js';

const sandboxes: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((s) => s.close()));
});
async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const s = await startSandbox({ port: 0, rpm: 60_000, ...options });
  sandboxes.push(s);
  return s;
}

function run(s: Sandbox, options: Partial<EnrichOptions> & Pick<EnrichOptions, 'input' | 'store'>) {
  return enrich({ baseUrl: s.baseUrl, token: s.token, ...options });
}

/** The output without lead_billing, which by design says how each answer was obtained. */
function withoutBilling(file: string): Array<Record<string, string>> {
  return readCsvObjects(file).map(({ lead_billing: _billing, ...rest }) => rest);
}

function mixedInput(dir: string, n = 60): string {
  const keys = emails(n);
  // Duplicates in other spellings, a miss, a rejected key and an invalid one.
  const rows = [...keys, keys[3]!.toUpperCase(), ` ${keys[7]} `, 'someone@notfound-inc.com', 'reject@acme.com', 'not-an-email'];
  return writeCsv(path.join(dir, 'in.csv'), [['email'], ...rows.map((e) => [e])]);
}

describe('result store', () => {
  it('a second run of the same file pays nothing and writes the same outputs (but lead_billing)', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = mixedInput(dir);
    const store = path.join(dir, 'store.sqlite');
    const first = await run(s, { input, store, output: path.join(dir, 'a.csv') });
    const charged = s.stats.creditsCharged;
    const lookups = s.stats.byOperation.lookup_email;
    const second = await run(s, { input, store, output: path.join(dir, 'b.csv') });
    expect(s.stats.creditsCharged).toBe(charged);
    // No key is asked again, the one the API refused (400) neither: that answer is kept too.
    expect(s.stats.byOperation.lookup_email).toBe(lookups!);
    expect(second.billing).toMatchObject({ charged: 0, free: 0, duplicate: 0, cached: first.billing.charged + first.billing.free + first.billing.duplicate });
    expect(withoutBilling(path.join(dir, 'b.csv'))).toEqual(withoutBilling(path.join(dir, 'a.csv')));
    expect(fs.readFileSync(path.join(dir, 'b.errors.csv'), 'utf8')).toBe(fs.readFileSync(path.join(dir, 'a.errors.csv'), 'utf8'));
  });

  it('--max-age fetches stale answers again and --refresh ignores earlier runs', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(5).map((e) => [e]), [emails(1)[0]!]]);
    const store = path.join(dir, 'store.sqlite');
    await run(s, { input, store });
    expect(s.stats.byOperation.lookup_email).toBe(5);
    await run(s, { input, store, maxAgeMs: 60_000 });
    expect(s.stats.byOperation.lookup_email).toBe(5);
    await new Promise((r) => setTimeout(r, 30));
    const stale = await run(s, { input, store, maxAgeMs: 10 });
    expect(s.stats.byOperation.lookup_email).toBe(10);
    expect(stale.billing.cached).toBe(0);
    const refreshed = await run(s, { input, store, refresh: true });
    expect(s.stats.byOperation.lookup_email).toBe(15);
    // Within the refreshed run, the duplicate is still answered once.
    expect(refreshed.billing.duplicate).toBe(1);
  });

  it('keeps the answers of different services apart', async () => {
    const a = await sandbox();
    const b = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(3).map((e) => [e])]);
    const store = path.join(dir, 'store.sqlite');
    await run(a, { input, store });
    const second = await run(b, { input, store });
    expect(second.billing.cached).toBe(0);
    expect(b.stats.byOperation.lookup_email).toBe(3);
  });

  it('the dry run predicts what the real run then spends', async () => {
    const s = await sandbox({ notFoundRate: 0 });
    const dir = makeTempDir();
    const input = mixedInput(dir, 40);
    const storePath = path.join(dir, 'store.sqlite');
    // Half of the keys are already known from an earlier run.
    await run(s, { input: writeCsv(path.join(dir, 'half.csv'), [['email'], ...emails(20).map((e) => [e])]), store: storePath });
    const client = new LeadClient({ baseUrl: s.baseUrl, token: s.token });
    const store = ResultStore.open({ path: storePath });
    const requestsBefore = s.stats.byOperation.lookup_email ?? 0;
    const plan = await planRun({ input, client, store, service: client.baseUrl, maxAgeMs: 86_400_000, refresh: false });
    store.close();
    client.close();
    expect(s.stats.byOperation.lookup_email ?? 0).toBe(requestsBefore);
    expect(plan).toMatchObject({ rows: 45, invalidRows: 1, distinctKeys: { lookup_email: 42 }, alreadyKnown: { lookup_email: 20 }, lookupsToMake: 22 });
    const charged = s.stats.creditsCharged;
    const summary = await run(s, { input, store: storePath });
    expect(summary.requests).toBe(plan.lookupsToMake);
    // Every key is found here except the `notfound` one: the bound is exact but for it.
    expect(s.stats.creditsCharged - charged).toBe(plan.creditsNeeded - 4 * 2);
    expect(plan.fits).toBe(true);
  });
});

describe('dry run and real run plan alike', () => {
  const dryRun = async (s: Sandbox, storePath: string, options: Partial<Parameters<typeof planRun>[0]> & { input: string }) => {
    const client = new LeadClient({ baseUrl: s.baseUrl, token: s.token });
    const store = ResultStore.open({ path: storePath });
    try {
      return await planRun({ client, store, service: client.baseUrl, maxAgeMs: 86_400_000, refresh: false, ...options });
    } finally {
      store.close();
      client.close();
    }
  };

  it('ragged rows, keys that are not UTF-8, and each --shard count the same rows, errors and lookups', async () => {
    const s = await sandbox({ notFoundRate: 0 });
    const dir = makeTempDir();
    const input = path.join(dir, 'in.csv');
    const good = emails(30).map((e) => Buffer.from(`${e},ok\n`));
    // A row with a non-empty cell beyond the header, and a Windows-1252 "josé@acme.com".
    fs.writeFileSync(
      input,
      Buffer.concat([
        Buffer.from('email,note\n'),
        ...good,
        Buffer.from('extra@acme.com,ok,surplus\n'),
        Buffer.from([0x6a, 0x6f, 0x73, 0xe9]),
        Buffer.from('@acme.com,ok\n'),
      ]),
    );
    for (const shard of [undefined, { index: 1, count: 2 }, { index: 2, count: 2 }]) {
      const storePath = path.join(dir, `store-${shard?.index ?? 0}.sqlite`);
      const plan = await dryRun(s, storePath, { input, shard });
      const summary = await run(s, { input, store: storePath, shard, output: path.join(dir, `out-${shard?.index ?? 0}.csv`) });
      expect({ rows: plan.rows, invalid: plan.invalidRows, lookups: plan.lookupsToMake }).toEqual({
        rows: summary.rows,
        invalid: summary.errorCodes.invalid_input ?? 0,
        lookups: summary.requests,
      });
    }
  });

  it('with --with and profile URLs whose domain only the lead tells, the bound still covers what the run spends', async () => {
    const s = await sandbox({ notFoundRate: 0 });
    const dir = makeTempDir();
    const urls = Array.from({ length: 6 }, (_, i) => [`https://www.linkedin.com/in/person-${i}`]);
    const input = writeCsv(path.join(dir, 'profiles.csv'), [['linkedin'], ...urls]);
    const storePath = path.join(dir, 'store.sqlite');
    const plan = await dryRun(s, storePath, { input, with: ['mx', 'whois'] });
    const charged = s.stats.creditsCharged;
    const summary = await run(s, { input, store: storePath, with: ['mx', 'whois'] });
    expect(summary.requests).toBeGreaterThan(6);
    expect(plan.lookupsToMake).toBeGreaterThanOrEqual(summary.requests);
    expect(plan.creditsNeeded).toBeGreaterThanOrEqual(s.stats.creditsCharged - charged);
  });
});

/** Puts the sandbox's own answers for these emails into a store, as an earlier run would have. */
function warmStore(file: string, service: string, keys: string[]): void {
  const store = ResultStore.open({ path: file });
  for (const email of keys) {
    const answer = sandboxAnswer('lookup_email', email);
    if (answer.kind !== 'rejected') store.put(service, 'lookup_email', email, { found: answer.kind === 'found', data: answer.data }, 'warm-up');
  }
  store.close();
}

describe('resume after a kill', () => {
  // A paced sandbox (600 RPM: a request every 100 ms) so that kills land in the middle of a run.
  async function killedThenResumed(killAfterMs: number | 'answered' | 'writing') {
    const s = await sandbox({ rpm: 600 });
    const dir = makeTempDir();
    const n = killAfterMs === 'writing' ? 20_000 : 40;
    const rows = emails(n);
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...rows.map((e) => [e])]);
    const env = { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: s.token, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') };
    const output = path.join(dir, 'in.enriched.csv');
    if (killAfterMs === 'writing') {
      // Fill the store first (with the sandbox's own answers) so that the killed run answers every
      // row from it and spends its time writing.
      warmStore(env.LEAD_ENRICH_STORE, s.baseUrl, rows);
    }
    const child = spawnCli(['enrich', input, '--quiet'], { env });
    child.stdin!.end();
    if (killAfterMs === 'writing') {
      const written = () => {
        const partial = partialOf(output, child.pid);
        return partial !== undefined && fs.existsSync(partial) && fs.statSync(partial).size > 0;
      };
      const deadline = Date.now() + 10_000;
      while (!written() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    } else if (killAfterMs === 'answered') {
      // Mid-run is a state, not a time: some keys answered (and paid), most not yet. A fixed delay
      // landed before any answer when the machine was busy starting the process.
      const deadline = Date.now() + 20_000;
      while (s.stats.charges.size < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    } else {
      await new Promise((r) => setTimeout(r, killAfterMs));
    }
    child.kill('SIGKILL');
    const killed = await child.result;
    expect(killed.signal).toBe('SIGKILL');
    // A killed run never leaves a file that looks finished.
    if (killAfterMs === 'writing') expect(fs.existsSync(output)).toBe(false);
    if (fs.existsSync(output)) expect(readCsvObjects(output)).toHaveLength(n);
    const chargedByKilledRun = s.stats.charges.size;
    const resumed = await runCli(['enrich', input, '--quiet'], { env, timeoutMs: 30_000 });
    expect(resumed.code).toBe(0);
    // Each key was charged at most once across both runs (the killed run's in-flight requests
    // were answered by the server before the kill, and stored if the kill came after the commit).
    expect([...s.stats.charges.values()].every((count) => count <= 2)).toBe(true);
    const totalCharges = [...s.stats.charges.values()].reduce((a, b) => a + b, 0);
    expect(totalCharges).toBeLessThanOrEqual(s.stats.charges.size + 10);
    // Outputs equal an uninterrupted run's (computed in-process on a fresh store), but for lead_billing.
    const reference = await sandbox({ credits: 1_000_000 });
    const referenceStore = path.join(dir, 'reference.sqlite');
    // For the big file, the reference run too is answered from a store warmed with the same answers.
    if (killAfterMs === 'writing') warmStore(referenceStore, reference.baseUrl, rows);
    await enrich({ input, baseUrl: reference.baseUrl, token: reference.token, store: referenceStore, output: path.join(dir, 'reference.csv') });
    expect(withoutBilling(output)).toEqual(withoutBilling(path.join(dir, 'reference.csv')));
    return { chargedByKilledRun };
  }

  it(
    'killed before the first answer',
    async () => {
      await killedThenResumed(150);
    },
    hangBound(30_000),
  );

  it(
    'killed mid-run',
    async () => {
      const { chargedByKilledRun } = await killedThenResumed('answered');
      expect(chargedByKilledRun).toBeGreaterThan(0);
    },
    hangBound(30_000),
  );

  it(
    'killed while writing the output',
    async () => {
      await killedThenResumed('writing');
    },
    hangBound(60_000),
  );
});

// Credits as the service bills them (a person 4, a role-based lead 2, plus 2 per phone number,
// nothing when nothing is found), the credit reserve and --budget against them, and the members
// the interface does not list (phones) as columns through `--fields lead.MEMBER`. The sandbox
// bills so with `variedPrices`.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CreditGuard } from '../../src/lookup/credits.js';
import { planRun } from '../../src/run/dry-run.js';
import { enrich, type EnrichOptions } from '../../src/run/enrich.js';
import { exitStatusOf } from '../../src/run/exit-status.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { readCsvObjects, writeCsv } from '../helpers/files.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';

const sandbox = sandboxesPerTest({ notFoundRate: 0, variedPrices: true });

function run(s: Sandbox, dir: string, options: Partial<EnrichOptions> & { input: string }) {
  return enrich({ baseUrl: s.baseUrl, token: s.token, store: path.join(dir, 'store.sqlite'), concurrency: 4, ...options });
}

/** `n` emails: role addresses (info@), people, and misses, in turn. */
function emailFile(dir: string, n: number): string {
  const rows = Array.from({ length: n }, (_, i) => [i % 5 === 0 ? `info@firm${i}.com` : i % 5 === 4 ? `miss${i}.notfound@acme.com` : `person${i}@globex.com`]);
  return writeCsv(path.join(dir, 'in.csv'), [['email'], ...rows]);
}

describe('prices that vary with the answer', () => {
  it('with phones and role-based leads the reserve holds, and the credits reported are what the server charged', async () => {
    const s = await sandbox({ credits: 400, threshold: 100 });
    const dir = tempDir();
    const summary = await run(s, dir, { input: emailFile(dir, 300) });
    expect(exitStatusOf(summary)).toBe(3);
    expect(summary.stoppedBy).toBe('credits');
    expect(s.credits).toBeGreaterThanOrEqual(100);
    expect(summary.credits.spent).toBe(s.stats.creditsCharged);
    expect(summary.credits.after).toBe(s.credits);
    // Some answers cost more than the published 4: the prices did vary.
    expect(s.stats.creditsCharged).not.toBe(4 * summary.billing.charged);
  });

  it('the --json summary credits equal what the server charged', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const input = emailFile(dir, 40);
    const r = await runCli(['enrich', input, '--json'], {
      env: { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: s.token, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') },
    });
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as { credits: { spent: number } };
    expect(summary.credits.spent).toBe(s.stats.creditsCharged);
  });
});

describe('the credit guard', () => {
  it('reserves the most a person lookup has cost in this run, never less than the published 4', () => {
    const guard = new CreditGuard({ balance: 120, reserve: 100 });
    expect(guard.costOf('lookup_email')).toBe(4);
    guard.finish(guard.tryBegin('lookup_email')!, true, 8); // two phones
    guard.finish(guard.tryBegin('lookup_email')!, true, 2); // a role-based lead
    expect(guard.costOf('lookup_email')).toBe(8);
    expect(guard.spent).toBe(10);
    // 120 - 10 = 110: one more at 8 would leave 102, a second could go below the reserve.
    expect(guard.tryBegin('lookup_email')).toBeDefined();
    expect(guard.tryBegin('lookup_email')).toBeUndefined();
  });
});

describe('--budget', () => {
  it('the server charges at most N; exit 3; the rows not looked up are skipped/budget', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const summary = await run(s, dir, { input: emailFile(dir, 100), budget: 60 });
    expect(exitStatusOf(summary)).toBe(3);
    expect(summary.stoppedBy).toBe('budget');
    expect(s.stats.creditsCharged).toBeLessThanOrEqual(60);
    expect(s.stats.creditsCharged).toBeGreaterThan(30);
    const skipped = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
    expect(skipped.length).toBeGreaterThan(0);
    expect(new Set(skipped.map((row) => row.error_code))).toEqual(new Set(['budget']));
  });

  it('the flag and the config key: exit 3 with one line naming the budget', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const input = emailFile(dir, 60);
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ budget: 20 }));
    const env = { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: s.token, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') };
    const r = await runCli(['enrich', input, '-q', '--config', config], { env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('stopped at --budget');
    expect(s.stats.creditsCharged).toBeLessThanOrEqual(20);
    const bad = await runCli(['enrich', input, '--budget', 'lots'], { env });
    expect(bad.code).toBe(1);
    // The rule names every form it takes (since --budget N/day and N/month).
    expect(bad.stderr).toContain(
      "Invalid option --budget: must be N (credits for this run), N/day or N/month (a UTC day or month), N a whole number, such as 2000/day; repeat it for several, got 'lots'",
    );
  });

  it('--dry-run says whether the budget covers the plan', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const input = emailFile(dir, 10);
    const options = { input, baseUrl: s.baseUrl, token: s.token, store: path.join(dir, 'store.sqlite') };
    expect((await planRun({ ...options, budget: 10 })).budget).toEqual({ limit: 10, covers: false });
    expect((await planRun({ ...options, budget: 40 })).budget).toEqual({ limit: 40, covers: true });
    expect((await planRun(options)).budget).toBeUndefined();
    const r = await runCli(['enrich', input, '--dry-run', '--budget', '10'], {
      env: { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: s.token, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') },
    });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('Budget: 10 credits: it does NOT cover the credits needed');
  });
});

describe('--fields lead.MEMBER', () => {
  it('adds any member of the lead as a column: lead.phones as lead_phones, its numbers joined by "; ", prefixed with --prefix', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const input = emailFile(dir, 30);
    await run(s, dir, { input, fields: ['lead_name', 'lead.phones', 'lead.addresses'], prefix: 'new_' });
    const out = readCsvObjects(path.join(dir, 'in.enriched.csv'));
    expect(Object.keys(out[0]!)).toEqual(['email', 'new_lead_status', 'new_lead_name', 'new_lead_phones', 'new_lead_addresses']);
    await run(s, dir, { input, output: path.join(dir, 'out.jsonl') });
    const answers = fs
      .readFileSync(path.join(dir, 'out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { lead?: { phones?: string[] } });
    const withPhones = answers.map((a, i) => [a, out[i]!] as const).filter(([a]) => (a.lead?.phones?.length ?? 0) > 0);
    expect(withPhones.length).toBeGreaterThan(0);
    // A cell starting with '+' is escaped against spreadsheet formulas, as every added cell is.
    for (const [answer, row] of withPhones) expect(row.new_lead_phones).toBe(`'${answer.lead!.phones!.join('; ')}`);
    // An array of objects: each as JSON, joined the same way.
    const addresses = (answers[1]!.lead as { addresses: unknown[] }).addresses;
    expect(out[1]!.new_lead_addresses).toBe(addresses.map((a) => JSON.stringify(a)).join('; '));
  });
});

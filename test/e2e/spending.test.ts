// Spending over days and months (docs/cli-contract.md): --budget N/day and N/month across every
// run on one store or one Redis, the ledger of what was charged, `store spend`. The sandbox bills
// as the service does (a person 4 credits plus 2 per phone number, nothing when nothing is found);
// the inputs hold people only (no role addresses), so what the ledger records is what was charged.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { htmlReport } from '../../src/report/html-report.js';
import type { RunReport } from '../../src/report/run-report.js';
import { enrich } from '../../src/run/enrich.js';
import { exitStatusOf } from '../../src/run/exit-status.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { lines, runCli, spawnCli, tempDir } from '../helpers/cli.js';
import { readCsvObjects, writeCsv } from '../helpers/files.js';
import { REDIS_MISSING, startRedis, type RedisServer } from '../helpers/redis.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';
import { accountOnlyServer } from '../helpers/servers.js';
import { until } from './reliability/support.js';
import { hangBound } from '../helpers/processes.js';

const sandbox = sandboxesPerTest({ notFoundRate: 0, variedPrices: true });

/** `n` people's emails (no role address: each is billed 4 plus 2 per phone, 4 to 8). */
function people(dir: string, n: number, tag = 'p', name = 'in.csv'): string {
  return writeCsv(path.join(dir, name), [['email'], ...Array.from({ length: n }, (_, i) => [`${tag}${i}.person@globex.com`])]);
}

function envOf(s: Sandbox, store: string): Record<string, string> {
  return { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: s.token, LEAD_ENRICH_STORE: store };
}

const spendJson = async (store: string, ...more: string[]) =>
  JSON.parse((await runCli(['store', 'spend', '--store', store, '--json', ...more])).stdout) as {
    days: Array<{ day: string; credits: number; calls: number; lapsed: number }>;
    months: Array<{ month: string; credits: number }>;
    held: number;
  };
const total = (rows: Array<{ credits: number }>) => rows.reduce((sum, row) => sum + row.credits, 0);

describe('--budget N/day', () => {
  it('stops before the server charges past it (exit 3, rows skipped/budget, one line naming it, the spend and the reset); again that day: no charged lookup', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const store = path.join(dir, 'store.sqlite');
    const input = people(dir, 70); // about 420 credits
    // One lookup at a time: the run stops with less left than one lookup's worst case (8), so that
    // the same command again finds nothing it may spend (with more in flight, what their holds did
    // not cost is left for the next run: the two-runs test below).
    const command = ['enrich', input, '-q', '--budget', '200/day', '--concurrency', '1'];
    const r = await runCli(command, { env: envOf(s, store) });
    expect(r.code).toBe(3);
    expect(s.stats.creditsCharged).toBeLessThanOrEqual(200);
    expect(s.stats.creditsCharged).toBeGreaterThan(200 - 8);
    // -q: the run's one line (docs/cli-contract.md, "Every night, unattended") names the budget, the
    // period's spend when the run ended (every call in flight settled) and when the period starts again.
    expect(lines(r.stderr), r.stderr).toHaveLength(1);
    const said = /stopped at --budget 200\/day \((\d+) of 200 credits spent on \d{4}-\d\d-\d\d \(UTC\); the day resets at 00:00 UTC, in \d+[hms]/.exec(
      lines(r.stderr)[0]!,
    );
    expect(said, r.stderr).not.toBeNull();
    expect(Number(said![1])).toBe(s.stats.creditsCharged);
    const skipped = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
    expect(skipped.length).toBeGreaterThan(0);
    expect(new Set(skipped.map((row) => row.error_code))).toEqual(new Set(['budget']));

    const charged = s.stats.creditsCharged;
    const again = await runCli(command, { env: envOf(s, store) });
    expect(again.code).toBe(3);
    expect(s.stats.creditsCharged).toBe(charged);
    expect(again.stderr).toContain('--budget 200/day');
  });

  it('two runs at once on one store, each needing ~400, stay within 300 between them', async () => {
    const s = await sandbox({ latencyMs: [5, 15] });
    const dir = tempDir();
    const store = path.join(dir, 'store.sqlite');
    const runs = ['a', 'b'].map((tag) =>
      spawnCli(['enrich', people(dir, 70, tag, `${tag}.csv`), '-q', '--budget', '300/day', '--concurrency', '4'], { env: envOf(s, store) }),
    );
    const results = await Promise.all(runs.map((run) => run.result));
    expect(results.map((result) => result.code)).toEqual([3, 3]);
    expect(s.stats.creditsCharged).toBeLessThanOrEqual(300);
    expect(s.stats.creditsCharged).toBeGreaterThan(300 - 9 * 8);
    expect(total((await spendJson(store)).days)).toBe(s.stats.creditsCharged);
  });

  it('with a day and a month budget the tighter binds and is named, from the flags and from a config array', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const store = path.join(dir, 'store.sqlite');
    const input = people(dir, 60);
    const flags = await runCli(['enrich', input, '-q', '--budget', '1000/month', '--budget', '100/day'], { env: envOf(s, store) });
    expect(flags.code).toBe(3);
    expect(flags.stderr).toMatch(/stopped at --budget 100\/day/);
    expect(s.stats.creditsCharged).toBeLessThanOrEqual(100);
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ budget: ['150/day', '1000/month', 5000] }));
    const fromFile = await runCli(['enrich', input, '-q', '--config', config], { env: envOf(s, store) });
    expect(fromFile.code).toBe(3);
    expect(fromFile.stderr).toMatch(/stopped at --budget 150\/day/);
    expect(s.stats.creditsCharged).toBeLessThanOrEqual(150);
    expect(s.stats.creditsCharged).toBeGreaterThan(100);
  });

  it('--dry-run after some spend shows each budget: spent this period, left, whether the plan fits (--json the same)', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const store = path.join(dir, 'store.sqlite');
    await runCli(['enrich', people(dir, 10, 'early', 'early.csv'), '-q'], { env: envOf(s, store) });
    const spent = s.stats.creditsCharged;
    const input = people(dir, 30);
    const text = await runCli(['enrich', input, '--dry-run', '--budget', '300/day', '--budget', `${spent + 40}/month`], { env: envOf(s, store) });
    expect(text.code).toBe(3);
    expect(text.stdout).toContain(`Budget 300/day: ${spent} credits spent today`);
    expect(text.stdout).toContain(`${300 - spent} left: it covers the credits needed`);
    expect(text.stdout).toContain(`Budget ${spent + 40}/month: ${spent} credits spent this month`);
    expect(text.stdout).toContain('40 left: it does NOT cover the credits needed; the run would stop at --budget');
    const json = await runCli(['enrich', input, '--dry-run', '--json', '--budget', '300/day'], { env: envOf(s, store) });
    expect(json.code).toBe(0);
    const plan = JSON.parse(json.stdout) as { budgets: Array<Record<string, unknown>> };
    expect(plan.budgets).toEqual([
      { budget: '300/day', credits: 300, per: 'day', spent, left: 300 - spent, period: new Date().toISOString().slice(0, 10), fits: true },
    ]);
    expect(s.stats.creditsCharged).toBe(spent);
  });

  it('a run whose keys are all stored exits 0 under an exhausted day budget', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const store = path.join(dir, 'store.sqlite');
    const input = people(dir, 20);
    expect((await runCli(['enrich', input, '-q'], { env: envOf(s, store) })).code).toBe(0);
    const requests = s.stats.requests;
    const r = await runCli(['enrich', input, '-q', '--budget', '10/day'], { env: envOf(s, store) });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(s.stats.requests).toBe(requests);
  });

  it.each(['10/week', '-5/day', 'abc'])('--budget %s: exit 1, one line naming the forms, no lookup', async (value) => {
    const s = await sandbox();
    const dir = tempDir();
    const r = await runCli(['enrich', people(dir, 5), `--budget=${value}`], { env: envOf(s, path.join(dir, 'store.sqlite')) });
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([
      `lead-enrich: Invalid option --budget: must be N (credits for this run), N/day or N/month (a UTC day or month), N a whole number, such as 2000/day; repeat it for several, got '${value}' (code: config)`,
    ]);
    expect(s.stats.requests).toBe(0);
  });
});

describe('periods rolling over (the run on an injected clock)', () => {
  it.each([
    ['day', '2026-03-14T23:50:00Z', '2026-03-15T00:10:00Z'],
    ['month', '2026-03-31T23:50:00Z', '2026-04-01T00:10:00Z'],
  ] as const)('a new %s may spend again', async (per, before, after) => {
    const s = await sandbox();
    const dir = tempDir();
    const clock = { now: Date.parse(before) };
    const options = {
      input: people(dir, 30),
      baseUrl: s.baseUrl,
      token: s.token,
      store: path.join(dir, 'store.sqlite'),
      budget: `60/${per}`,
      tuning: { now: () => clock.now },
    };
    const first = await enrich(options);
    expect(first.stoppedBy).toBe('budget');
    const charged = s.stats.creditsCharged;
    expect(charged).toBeLessThanOrEqual(60);
    expect(first.budgets[0]).toMatchObject({
      budget: `60/${per}`,
      stopped: true,
      period: new Date(clock.now).toISOString().slice(0, per === 'day' ? 10 : 7),
      resetsAt: new Date(Date.parse(after) - 600_000).toISOString(),
    });
    expect((await enrich(options)).stoppedBy).toBe('budget');
    expect(s.stats.creditsCharged).toBeLessThan(charged + 8);
    clock.now = Date.parse(after);
    const next = await enrich(options);
    expect(s.stats.creditsCharged).toBeGreaterThan(charged + 40);
    expect(next.budgets[0]).toMatchObject({ period: after.slice(0, per === 'day' ? 10 : 7) });
  });
});

describe('the ledger', () => {
  it('store spend and --json match what the server charged through the store', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const store = path.join(dir, 'store.sqlite');
    await runCli(['enrich', people(dir, 25), '-q'], { env: envOf(s, store) });
    await runCli(['enrich', people(dir, 15, 'q', 'more.csv'), '-q'], { env: envOf(s, store) });
    const json = await spendJson(store);
    const today = new Date().toISOString();
    expect(json.days).toEqual([{ day: today.slice(0, 10), credits: s.stats.creditsCharged, calls: 40, lapsed: 0 }]);
    expect(json.months).toEqual([{ month: today.slice(0, 7), credits: s.stats.creditsCharged, calls: 40, lapsed: 0 }]);
    const text = await runCli(['store', 'spend', '--store', store]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`${today.slice(0, 10)}  ${json.days[0]!.credits} credits  (${json.days[0]!.calls} charged lookups)`);
  });

  it('a run killed with SIGKILL after 20 charged lookups: store spend counts them, within the calls in flight', async () => {
    const s = await sandbox({ latencyMs: [20, 40] });
    const dir = tempDir();
    const store = path.join(dir, 'store.sqlite');
    const child = spawnCli(['enrich', people(dir, 200), '-q', '--concurrency', '2'], { env: envOf(s, store) });
    await until(() => s.stats.charges.size >= 20, '20 charged lookups');
    child.kill('SIGKILL');
    await child.result;
    const charged = s.stats.creditsCharged;
    const recorded = total((await spendJson(store)).days);
    expect(recorded).toBeLessThanOrEqual(charged);
    expect(recorded).toBeGreaterThanOrEqual(charged - 2 * 8);
    expect(recorded).toBeGreaterThanOrEqual(20 * 4 - 2 * 8);
  });

  it('the run report shows the budgets, the one that stopped the run and when it resets', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const store = path.join(dir, 'store.sqlite');
    const summary = await enrich({
      input: people(dir, 40),
      baseUrl: s.baseUrl,
      token: s.token,
      store,
      budget: ['120/day', '5000/month'],
      report: path.join(dir, 'r.json'),
    });
    expect(exitStatusOf(summary)).toBe(3);
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'r.json'), 'utf8')) as { budgets: Array<Record<string, unknown>> };
    const day = new Date().toISOString().slice(0, 10);
    expect(report.budgets).toEqual([
      {
        budget: '120/day',
        per: 'day',
        credits: 120,
        spent: s.stats.creditsCharged,
        left: 120 - s.stats.creditsCharged,
        period: day,
        stopped: true,
        resetsAt: `${new Date(Date.parse(day) + 86_400_000).toISOString()}`,
      },
      {
        budget: '5000/month',
        per: 'month',
        credits: 5000,
        spent: s.stats.creditsCharged,
        left: 5000 - s.stats.creditsCharged,
        period: day.slice(0, 7),
        stopped: false,
        resetsAt: null,
      },
    ]);
    expect(summary.budgets.map((b) => b.stopped)).toEqual([true, false]);
    const html = htmlReport(report as unknown as RunReport);
    expect(html).toContain('<h2>Budgets</h2>');
    expect(html).toContain(`<code>--budget 120/day</code>`);
    expect(html).toContain(`stopped the run; resets ${new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10)} 00:00:00 UTC`);
  });
});

describe('workers on one Redis', () => {
  let redis: RedisServer | undefined;
  afterEach(async () => {
    await redis?.stop();
    redis = undefined;
  });

  // REDIS_MISSING: no redis-server on PATH here (.ci/run installs it).
  it.skipIf(REDIS_MISSING)('two workers with --budget 300/day, each needing ~400, stay within 300 between them; each store records its own', async () => {
    redis = await startRedis();
    const s = await sandbox({ latencyMs: [5, 15] });
    const dir = tempDir();
    const stores = ['a', 'b'].map((tag) => path.join(dir, `${tag}.sqlite`));
    const runs = ['a', 'b'].map((tag, i) =>
      spawnCli(['enrich', people(dir, 70, tag, `${tag}.csv`), '-q', '--budget', '300/day', '--redis', redis!.url, '--concurrency', '4'], {
        env: envOf(s, stores[i]!),
      }),
    );
    const results = await Promise.all(runs.map((run) => run.result));
    expect(results.map((result) => result.code)).toEqual([3, 3]);
    expect(s.stats.creditsCharged).toBeLessThanOrEqual(300);
    expect(s.stats.creditsCharged).toBeGreaterThan(300 - 9 * 8);
    const recorded = total((await spendJson(stores[0]!)).days) + total((await spendJson(stores[1]!)).days);
    expect(recorded).toBe(s.stats.creditsCharged);
    // The same budget, again that day: Redis remembers what both spent (and holds the rest to it).
    // One lookup at a time: it stops with less than a lookup's worst case left, none of its own in flight.
    const again = await runCli(['enrich', people(dir, 40, 'c', 'c.csv'), '-q', '--budget', '300/day', '--redis', redis.url, '--concurrency', '1'], {
      env: envOf(s, path.join(dir, 'c.sqlite')),
    });
    expect(again.code).toBe(3);
    expect(again.stderr).toContain(`(${s.stats.creditsCharged} of 300 credits spent on`);
    const plan = await runCli(['enrich', people(dir, 10, 'd', 'd.csv'), '--dry-run', '--budget', '300/day', '--redis', redis.url], {
      env: envOf(s, path.join(dir, 'd.sqlite')),
    });
    expect(plan.code).toBe(3);
    expect(plan.stdout).toContain(`Budget 300/day: ${s.stats.creditsCharged} credits spent today`);
  });
});

describe("a killed run's lookups in flight", () => {
  it(
    'count as spent at their worst case: runs killed with SIGKILL mid-flight, then a full run, never pass --budget N/month',
    async () => {
      // Long answers, many at once: each kill leaves calls the sandbox charged (it charges when a
      // request arrives, and answers after the latency) whose answers no store ever saw.
      const s = await sandbox({ latencyMs: [150, 250] });
      const dir = tempDir();
      const store = path.join(dir, 'store.sqlite');
      const input = people(dir, 200);
      const command = ['enrich', input, '-q', '--budget', '400/month', '--concurrency', '8'];
      for (let kill = 0; kill < 3; kill++) {
        const child = spawnCli(command, { env: envOf(s, store) });
        const before = s.stats.creditsCharged;
        await until(() => s.stats.creditsCharged >= before + 40, '40 more credits charged');
        child.kill('SIGKILL');
        await child.result;
      }
      const charged = s.stats.creditsCharged;
      const last = await runCli(command, { env: envOf(s, store) });
      expect(last.code, last.stderr).toBe(3);
      expect(s.stats.creditsCharged).toBeGreaterThan(charged);
      expect(s.stats.creditsCharged).toBeLessThanOrEqual(400);
      // What store spend says: every charge, and the killed runs' calls in flight at their worst case.
      const spend = await spendJson(store);
      expect(spend.held).toBe(0);
      expect(total(spend.days)).toBeGreaterThanOrEqual(s.stats.creditsCharged);
      expect(spend.days.reduce((sum, day) => sum + day.lapsed, 0)).toBeGreaterThan(0);
      expect(total(spend.days) - spend.days.reduce((sum, day) => sum + day.lapsed, 0)).toBeLessThanOrEqual(s.stats.creditsCharged);
    },
    hangBound(60_000),
  );
});

describe("one service's spend", () => {
  it(
    'a rehearsal against the sandbox never counts against another service’s budget; store spend and store clear take --service',
    async () => {
      const rehearsal = await sandbox();
      const real = await sandbox();
      const dir = tempDir();
      const store = path.join(dir, 'store.sqlite');
      expect((await runCli(['enrich', people(dir, 30, 'r', 'rehearse.csv'), '-q'], { env: envOf(rehearsal, store) })).code).toBe(0);
      const rehearsed = rehearsal.stats.creditsCharged;
      expect(rehearsed).toBeGreaterThan(100);
      // The real service's day budget is smaller than what the rehearsal spent: it counts none of it.
      const r = await runCli(['enrich', people(dir, 10, 'n', 'night.csv'), '--json', '--budget', '100/day'], { env: envOf(real, store) });
      expect(r.code, r.stderr).toBe(0);
      expect(real.stats.creditsCharged).toBeGreaterThan(40);
      expect(JSON.parse(r.stdout).budgets).toEqual([
        expect.objectContaining({ budget: '100/day', spent: real.stats.creditsCharged, left: 100 - real.stats.creditsCharged }),
      ]);
      // -q: the one line of a run the real service's budget stops names its spend only.
      const stopped = await runCli(['enrich', people(dir, 10, 'm', 'more.csv'), '-q', '--budget', `${real.stats.creditsCharged + 4}/day`], {
        env: envOf(real, store),
      });
      expect(stopped.code).toBe(3);
      expect(lines(stopped.stderr)).toHaveLength(1);
      expect(stopped.stderr).toContain(
        `stopped at --budget ${real.stats.creditsCharged + 4}/day (${real.stats.creditsCharged} of ${real.stats.creditsCharged + 4} credits spent on`,
      );
      const plan = await runCli(['enrich', people(dir, 5, 'p', 'plan.csv'), '--dry-run', '--budget', '100/day'], { env: envOf(real, store) });
      expect(plan.stdout).toContain(`Budget 100/day: ${real.stats.creditsCharged} credits spent today`);
      // store spend shows each service apart, and what is left of a budget for each.
      const one = await spendJson(store, '--service', real.baseUrl, '--budget', '100/day');
      expect(total(one.days)).toBe(real.stats.creditsCharged);
      const text = (await runCli(['store', 'spend', '--store', store, '--budget', '100/day'])).stdout;
      expect(text).toContain(`${rehearsal.baseUrl}\n  Budgets (UTC, by this machine's clock): 100/day: ${rehearsed} spent on`);
      expect(text).toContain(`${real.baseUrl}\n  Budgets (UTC, by this machine's clock): 100/day: ${real.stats.creditsCharged} spent on`);
      // store clear --service clears that service's ledger, not the other's.
      expect((await runCli(['store', 'clear', '--store', store, '--service', rehearsal.baseUrl, '--yes'])).code).toBe(0);
      expect(total((await spendJson(store, '--service', rehearsal.baseUrl)).days)).toBe(0);
      expect(total((await spendJson(store)).days)).toBe(real.stats.creditsCharged);
    },
    hangBound(60_000),
  );
});

describe('every charged call counts', () => {
  it(
    'lookup, mx and whois record their charges in the store they would use (--store, LEAD_ENRICH_STORE), and hold to the config file’s budget: exit 3, one line, no call',
    async () => {
      const s = await sandbox();
      const dir = tempDir();
      const store = path.join(dir, 'store.sqlite');
      const env = envOf(s, path.join(dir, 'env.sqlite'));
      const one = await runCli(['lookup', 'email', 'jane.person@globex.com', '--store', store], { env });
      expect(one.code, one.stderr).toBe(0);
      // A person at what its answer says it cost (4, plus 2 a phone): what the sandbox charged.
      expect(await spendJson(store)).toMatchObject({ days: [{ credits: s.stats.creditsCharged, calls: 1 }], held: 0 });
      const mx = await runCli(['mx', 'globex.com'], { env });
      expect(mx.code, mx.stderr).toBe(0);
      // An MX call (price not published) at the price a run starts from, an upper bound: in LEAD_ENRICH_STORE's store.
      expect(await spendJson(path.join(dir, 'env.sqlite'))).toMatchObject({ days: [{ credits: 4, calls: 1 }], held: 0 });
      // The config file's day budget, which enrich stopped at, holds for them too.
      const config = path.join(dir, 'config.json');
      fs.writeFileSync(config, JSON.stringify({ budget: '24/day' }));
      const run = await runCli(['enrich', people(dir, 20), '-q', '--config', config], { env: envOf(s, store) });
      expect(run.code).toBe(3);
      const requests = s.stats.requests;
      // Less than a person's worst case (8) is left of the day: no person lookup is sent.
      for (const args of [
        ['lookup', 'email', 'someone.else@globex.com'],
        ['lookup', 'url', 'https://www.linkedin.com/in/some-one'],
      ]) {
        const refused = await runCli([...args, '--config', config, '--store', store], { env });
        expect(refused.code, refused.stderr).toBe(3);
        expect(lines(refused.stderr)).toHaveLength(1);
        expect(refused.stderr).toMatch(
          /^lead-enrich: Not sent: the call could have spent more than --budget 24\/day \(\d+ of 24 credits spent on \d{4}-\d\d-\d\d \(UTC\)\); the day resets at 00:00 UTC, in .+: run it again then \(code: budget\)\n$/,
        );
        expect(refused.stdout).toBe('');
      }
      expect(s.stats.requests).toBe(requests);
      // --budget on the command line, the same: a whois (held at 4) with nothing left of the day.
      const spent = total((await spendJson(store)).days);
      const flag = await runCli(['whois', 'globex.com', '--store', store, '--budget', `${spent}/day`], { env });
      expect(flag.code).toBe(3);
      expect(flag.stderr).toContain(`Not sent: the call could have spent more than --budget ${spent}/day (${spent} of ${spent} credits spent on`);
      expect(s.stats.requests).toBe(requests);
    },
    hangBound(60_000),
  );
});

describe("a lookup's worst case counts every phone it may carry", () => {
  /** A service whose every person has five phone numbers: 4 + 5 × 2 = 14 credits, which it counts. */
  async function fivePhones() {
    let charged = 0;
    let calls = 0;
    const server = await accountOnlyServer((req) => {
      calls++;
      const email = new URL(req.url!, 'http://x').searchParams.get('email');
      charged += 14;
      const phones = ['+1 555 0100', '+1 555 0101', '+1 555 0102', '+1 555 0103', '+1 555 0104'];
      return { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: email, lead: { name: 'Pat Five', phones } } }) };
    });
    return { ...server, charged: () => charged, calls: () => calls };
  }

  it(
    'the first answer dearer than any before may pass a budget by its excess, once; from then on a call holds its price, across runs',
    async () => {
      const server = await fivePhones();
      try {
        const dir = tempDir();
        const store = path.join(dir, 'store.sqlite');
        const env = { LEAD_API_BASE_URL: server.baseUrl, LEAD_API_TOKEN: 'tok-0123456789abcdef', LEAD_ENRICH_STORE: store };
        // A fresh store: nothing says a call may cost 14. The only call that fits holds all 12 left; it costs 14.
        const first = await runCli(['enrich', people(dir, 10), '-q', '--budget', '12/day', '--concurrency', '4'], { env });
        expect(first.code).toBe(3);
        expect(server.calls()).toBe(1);
        expect(first.stderr).toContain('(14 of 12 credits spent on');
        // The ledger remembers: the same budget sends nothing more, and a larger one holds 14 a call.
        const again = await runCli(['enrich', people(dir, 10), '-q', '--budget', '12/day'], { env });
        expect(again.code).toBe(3);
        expect(server.calls()).toBe(1);
        const larger = await runCli(['enrich', people(dir, 10, 'q', 'more.csv'), '-q', '--budget', '60/day', '--concurrency', '4'], { env });
        expect(larger.code).toBe(3);
        // 46 left after the first 14: three calls at 14 (the third holding the 18 left), never a fourth.
        expect(server.charged()).toBe(14 + 3 * 14);
        expect(server.charged()).toBeLessThanOrEqual(60);
        // A single lookup holds the same price: 4 left of the day, so it is not sent.
        const single = await runCli(['lookup', 'email', 'one.more@globex.com', '--budget', '60/day'], { env });
        expect(single.code).toBe(3);
        expect(server.calls()).toBe(4);
      } finally {
        server.close();
      }
    },
    hangBound(60_000),
  );
});

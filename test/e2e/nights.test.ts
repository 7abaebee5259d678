// The seeded simulation of nights (test/simulation/; docs/development.md, "The simulation of
// nights"): the nightly command run night after night on one store against a drifting sandbox,
// each night's conditions drawn from the seed (outages, flaky answers, the daily limit, slow
// answers, real SIGKILLs, full disks, the other cron line, runs across midnight), the oracle after
// every night. Here a few fixed seeds of thirty nights from 2028-02-10 (a month end, the leap day,
// another month end) with --max-age 7d, so that answers are looked up again and change within the
// month; `.ci/run` runs a whole year on a fresh seed. And the README's two cron recipes as written,
// on one store for a hundred days: every change mailed once.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import { run } from '../helpers/processes.js';
import { makeTempDir } from '../helpers/temp-dirs.js';

const MAIN = path.join(REPO_ROOT, 'test', 'simulation', 'main.js');

interface Summary {
  seed: number;
  trace: string;
  figures: { paidTwice: number; changes: { expected: number; reported: number; lost: number; duplicated: number } };
  table: Record<string, number>;
  firstFailure?: { night: number; failures: Array<[string, string]> };
}

async function simulate(args: string[], timeoutMs = 170_000): Promise<{ code: number | null; stdout: string; summary: Summary | undefined }> {
  const file = path.join(makeTempDir('lead-enrich-nights-'), 'summary.json');
  const result = await run(process.execPath, [MAIN, ...args, '--quiet', '--summary', file], { timeoutMs });
  const summary = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Summary) : undefined;
  return { code: result.code, stdout: result.stdout + result.stderr, summary };
}

/** Seeds whose thirty nights hold every condition at least once, kills of both cron lines among them (test/simulation/plan.js draws them). */
const SEEDS = [429, 1214, 2418];

describe('the simulation of nights', () => {
  it('draws the same trace from the same seed, and another from another seed, without running a night', async () => {
    const trace = async (seed: number) => (await simulate(['--seed', String(seed), '--nights', '365', '--plan'], 30_000)).stdout.match(/trace ([0-9a-f]{16})/)?.[1];
    const [a, again, b] = await Promise.all([trace(429), trace(429), trace(430)]);
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(again).toBe(a);
    expect(b).not.toBe(a);
  });

  // Fails on today's main, as it must: the money, history and outcomes fixes are not merged yet
  // (docs/development.md lists what each seed catches there). Becomes `it` once they are.
  it.concurrent.fails.each(SEEDS)('seed %i: thirty nights from 2028-02-10, every invariant after every night', { timeout: 180_000 }, async (seed) => {
    const { code, stdout, summary } = await simulate(['--seed', String(seed), '--nights', '30', '--start', '2028-02-10', '--max-age', '7d']);
    expect(summary, stdout).toBeDefined();
    expect(summary!.firstFailure, stdout).toBeUndefined();
    expect(code, stdout).toBe(0);
    expect(summary!.figures.paidTwice).toBe(0);
    expect(summary!.figures.changes).toMatchObject({ lost: 0, duplicated: 0 });
    expect(summary!.figures.changes.expected).toBeGreaterThan(0);
    for (const condition of ['killed', 'second line', 'down at start', 'flaky', 'midnight', 'month end', 'day budget']) expect(summary!.table[condition], condition).toBeGreaterThan(0);
  });
});

describe("the README's two cron recipes on one store", () => {
  // Fails on today's main: the first line absorbs the changes of the second, and blanks the rows
  // it cannot refresh under its budget (issue 49). Becomes `it` once history and outcomes are merged.
  it.fails('a hundred days against a drifting sandbox: every change mailed once, no enriched row blank', { timeout: 240_000 }, async () => {
    const { code, stdout, summary } = await simulate(['--recipes', '--seed', '7', '--nights', '100', '--rows', '120'], 230_000);
    expect(summary, stdout).toBeDefined();
    expect(summary!.firstFailure, stdout).toBeUndefined();
    expect(code, stdout).toBe(0);
    expect(summary!.figures.changes.expected).toBeGreaterThan(20);
    expect(summary!.figures.changes).toMatchObject({ lost: 0, duplicated: 0, reported: summary!.figures.changes.expected });
  });
});

// The README's two cron recipes as written ("Cron", then "Nightly: what changed since the last
// check"), on one store for a hundred simulated days against a sandbox whose people change jobs
// (test/simulation/, --recipes; docs/development.md, "The simulation of nights"): the first line at
// 02:30 with its day budget, the second at 03:15 with --max-age 90d and --changes, whose file is
// mailed when it exits 0 or 5. Every change is mailed once, and no row once enriched comes out blank.
import { describe, expect, it } from 'vitest';
import { simulate } from '../helpers/simulation.js';
import { hangBound } from '../helpers/processes.js';

describe("the README's two cron recipes on one store", () => {
  // 35 s on an idle 2-core machine (21 s of CPU); 117 s at a load average of 18. The bound catches
  // a simulation that hangs, not a slow machine.
  it('a hundred days against a drifting sandbox: every change mailed once, no enriched row blank', { timeout: hangBound(480_000) }, async () => {
    const { code, stdout, summary } = await simulate(['--recipes', '--seed', '7', '--nights', '100', '--rows', '120'], 450_000);
    expect(summary, stdout).toBeDefined();
    expect(summary!.firstFailure, stdout).toBeUndefined();
    expect(code, stdout).toBe(0);
    expect(summary!.figures.changes.expected).toBeGreaterThan(20);
    expect(summary!.figures.changes).toMatchObject({ lost: 0, duplicated: 0, reported: summary!.figures.changes.expected });
  });
});

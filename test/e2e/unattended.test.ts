// Every night, unattended (docs/cli-contract.md; issue 41): a run nobody watches stops promptly,
// says why in one line under -q, and answers --json whatever the outcome. Driven through the
// built CLI against the sandbox at a plan's rate (600 RPM: lookups queue at the gate's pace, which
// is what a stopped run used to wait out).
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { emails, makeTempDir, writeCsv } from '../helpers/files.js';
import { closeAll, envFor, expectNoCrash, sandbox } from './reliability/support.js';

afterAll(closeAll);

/** The time a stamped stderr line (no terminal: ISO 8601 first) was written. */
function stampOf(stderr: string, pattern: RegExp): number {
  const line = stderr.split('\n').find((l) => pattern.test(l));
  expect(line, stderr).toBeDefined();
  return Date.parse(line!.split(' ')[0]!);
}

describe.concurrent('stops are prompt: once a run stopped sending it ends as its requests in flight are answered', () => {
  it.each([
    ['--budget 40', () => ['--budget', '40']],
    // 10 found leads at 4 credits above the reserve.
    ['the credit reserve', () => ['--min-credits', String(10_000 - 40)]],
  ])('%s: exit 3, and the process ends within 2 s of its stop line (300 rows queued at 600 RPM)', async (_name, extra) => {
    const s = await sandbox({ rpm: 600, notFoundRate: 0 });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(300, 'prompt').map((k) => [k])]);
    const r = await runCli(['enrich', input, ...extra()], { env: envFor(s, dir), timeoutMs: 30_000 });
    const ended = Date.now();
    expectNoCrash(r);
    expect(r.code, r.stderr).toBe(3);
    const stopped = stampOf(r.stderr, /lead-enrich: No more lookups/);
    // The outcome line is written once the outputs are complete: no idle wait before it (it was 6 s).
    expect(stampOf(r.stderr, /Stopped early at/) - stopped, r.stderr).toBeLessThan(2_000);
    expect(ended - stopped, r.stderr).toBeLessThan(3_000);
    // The last balance reading still went: the credits are read, not estimated.
    expect(r.stderr).toMatch(/Credits: 10000 before, 99\d\d after, 40 spent/);
  }, 40_000);
});

describe.concurrent('one line with -q: a run that does not exit 0 says its outcome in one line, and only it', () => {
  it.each([
    ['the credit reserve', ['--min-credits', String(10_000 - 40)], /^\S+ lead-enrich: stopped at the credit reserve: 300 rows \(found 10, .*skipped: credit_reserve 290; see /],
    ['--budget', ['--budget', '40'], /^\S+ lead-enrich: stopped at --budget: 300 rows \(found 10, .*skipped: budget 290; see /],
    ['the reserve already reached at start', ['--min-credits', '10000'], /^\S+ lead-enrich: stopped at the credit reserve: 300 rows \(found 0, .*skipped: credit_reserve 300; see /],
  ])('%s: exit 3, one line on stderr', async (_name, extra, line) => {
    const s = await sandbox({ rpm: 600, notFoundRate: 0 });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(300, 'quiet').map((k) => [k])]);
    const r = await runCli(['enrich', input, '-q', ...extra], { env: envFor(s, dir), timeoutMs: 30_000 });
    expectNoCrash(r);
    expect(r.code, r.stderr).toBe(3);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(line);
  }, 40_000);
});

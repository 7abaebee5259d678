// Runs the simulation of nights (test/simulation/main.js, docs/development.md "The simulation of
// nights") as a process, on the built CLI, and reads the figures it writes (--summary).
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './cli.js';
import { run } from './processes.js';
import { makeTempDir } from './temp-dirs.js';

const MAIN = path.join(REPO_ROOT, 'test', 'simulation', 'main.js');

export interface Summary {
  seed: number;
  trace: string;
  figures: { paidTwice: number; changes: { expected: number; reported: number; lost: number; duplicated: number } };
  /** Nights by condition that took effect (the conditions table). */
  table: Record<string, number>;
  /** Nights by condition the seed drew (the plan). */
  drawn: Record<string, number>;
  firstFailure?: { night: number; failures: Array<[string, string]> };
}

export async function simulate(args: string[], timeoutMs = 170_000): Promise<{ code: number | null; stdout: string; summary: Summary | undefined }> {
  const file = path.join(makeTempDir('lead-enrich-nights-'), 'summary.json');
  const result = await run(process.execPath, [MAIN, ...args, '--quiet', '--summary', file], { timeoutMs });
  const summary = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Summary) : undefined;
  return { code: result.code, stdout: result.stdout + result.stderr, summary };
}

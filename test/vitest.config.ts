// Three layers, each a vitest project (`npm test -- --project unit` runs one):
// - unit: in-process, no socket, no wall-clock time; files in parallel.
// - integration: a real server on 127.0.0.1 port 0, in-process; files in parallel.
// - e2e: the built CLI as a process. Each file starts several processes: four files at a time on
//   an idle machine, two on a busy one (below), and at most three tests at once inside a file that
//   runs its tests concurrently (vitest's default of five, twice over, put ten CLIs on two cores and stretched
//   the time-bounded tests past their bounds); they run after the other two layers, not beside them.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import LongestFirst from './support/longest-first.js';

const shared = {
  setupFiles: ['test/support/remove-temp-dirs.ts', 'test/support/end-processes.ts'],
};

// The end-to-end files mostly wait (rate windows, processes starting): with both cores of a 2-core
// machine idle now, four at a time (the e2e layer of 55 files, measured on a fresh clone: 277 s
// with three, 240, 252 and 250 s with four, all green); with one idle, three; on a busy machine
// two, which is what two busy cores bear (three whole runs beside two CPU hogs: green, see
// docs/development.md). Idle is measured over a quarter second, not read from the load average (a
// minute's memory, which still holds npm install and the build). LEAD_ENRICH_E2E_WORKERS sets it.
async function idleCores(): Promise<number> {
  const idle = () =>
    os
      .cpus()
      .reduce((sum, cpu) => ({ idle: sum.idle + cpu.times.idle, all: sum.all + Object.values(cpu.times).reduce((a, b) => a + b, 0) }), { idle: 0, all: 0 });
  const before = idle();
  await new Promise((resolve) => setTimeout(resolve, 250));
  const after = idle();
  return after.all > before.all ? ((after.idle - before.idle) / (after.all - before.all)) * os.cpus().length : 0;
}
const idle = await idleCores();
const e2eWorkers = Number(process.env['LEAD_ENRICH_E2E_WORKERS']) || (idle >= 1.5 ? 4 : idle >= 1 ? 3 : 2);
// A test's bound catches a hang, not a slow machine: each layer's, twice over when no core is idle
// as the run starts (at a load average of 24, e2e tests of a dozen CLIs one after another, 6 s each
// to start, were killed at 60 s, and integration tests at 30 s).
const busy = (ms: number) => (idle >= 1 ? ms : 2 * ms);
const e2eTimeout = busy(60_000);
// The same for the processes the tests start (test/helpers/processes.ts: `hangBound`), read by every
// worker from the environment it inherits.
process.env['LEAD_ENRICH_SUITE_BUSY'] = idle >= 1 ? '' : '1';

// In test/ (the top level holds only what the repository's layout lists): the root is the repository.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export default defineConfig({
  root,
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    // The longest files first, from measured costs, not from the file sizes a fresh clone falls back to.
    sequence: { sequencer: LongestFirst },
    reporters: ['default', './test/support/skip-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          ...shared,
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          pool: 'forks',
          maxWorkers: 2,
          testTimeout: busy(10_000),
          hookTimeout: busy(10_000),
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          ...shared,
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          pool: 'forks',
          maxWorkers: 2,
          testTimeout: busy(30_000),
          hookTimeout: busy(30_000),
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          ...shared,
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          pool: 'forks',
          maxWorkers: e2eWorkers,
          maxConcurrency: 3,
          testTimeout: e2eTimeout,
          hookTimeout: e2eTimeout,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});

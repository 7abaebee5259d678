// Three layers, each a vitest project (`npm test -- --project unit` runs one):
// - unit: in-process, no socket, no wall-clock time; files in parallel.
// - integration: a real server on 127.0.0.1 port 0, in-process; files in parallel.
// - e2e: the built CLI as a process. Each file starts several processes, so two files at a time is
//   what two cores bear, and at most three tests at once inside a file that runs its tests
//   concurrently (vitest's default of five, twice over, put ten CLIs on two cores and stretched
//   the time-bounded tests past their bounds); they run after the other two layers, not beside them.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const shared = {
  setupFiles: ['test/support/remove-temp-dirs.ts'],
};

// In test/ (the top level holds only what the repository's layout lists): the root is the repository.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export default defineConfig({
  root,
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/skip-reporter.ts'],
    projects: [
      {
        extends: true,
        test: { ...shared, name: 'unit', include: ['test/unit/**/*.test.ts'], pool: 'forks', maxWorkers: 2, testTimeout: 10_000, hookTimeout: 10_000, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { ...shared, name: 'integration', include: ['test/integration/**/*.test.ts'], pool: 'forks', maxWorkers: 2, testTimeout: 30_000, hookTimeout: 30_000, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { ...shared, name: 'e2e', include: ['test/e2e/**/*.test.ts'], pool: 'forks', maxWorkers: 2, maxConcurrency: 3, testTimeout: 60_000, hookTimeout: 60_000, sequence: { groupOrder: 1 } },
      },
    ],
  },
});

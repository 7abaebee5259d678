// The mutation run of the money and history paths (`npm run mutate`; docs/development.md, "Mutation
// testing"): StrykerJS changes one operator, condition or constant at a time in the files below and
// runs the unit and integration projects against each change (test/mutation/vitest.config.ts).
// Every mutator is on and static mutants are tested: the score says what the tests catch, not what
// the configuration left out.
import os from 'node:os';
import path from 'node:path';

// Outside the checkout: a sandbox under test/ would hold copies of the test files, which
// test/support/global-setup.ts refuses (and the top level holds only what the layout lists).
const scratch = path.join(os.tmpdir(), 'stryker-lead-enrich');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  // Forks, as the suite's projects: the tests use FIFOs, signals and process state that worker threads
  // share (a FIFO test aborted a thread pool's process: libuv's "opened in unmanaged mode twice").
  vitest: { configFile: 'test/mutation/vitest.config.ts', related: true, pool: 'forks' },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: [
    // The money and history paths.
    'src/api/transport.ts',
    'src/api/error-factory.ts',
    'src/api/errors.ts',
    'src/lookup/credits.ts',
    'src/lookup/budget.ts',
    'src/lookup/spend-ledgers.ts',
    'src/lookup/request-path/with-credits.ts',
    'src/lookup/request-path/breaker.ts',
    'src/lookup/rate/rate-window.ts',
    'src/store/store-spend.ts',
    'src/store/batch-writer.ts',
    'src/store/answer-history.ts',
    'src/write/answer-changes.ts',
    'src/write/csv-lines.ts',
    'src/core/budget-periods.ts',
    'src/cluster/shared-spend.ts',
    'src/cli/fatal.ts',
    // What the money and history work added to those paths: whether another run's holds count as
    // spent, the ledger's reading and upkeep, the changes a run reports, which stale answers a
    // budget refreshes, and the single calls' budgets.
    'src/store/lease-watch.ts',
    'src/store/ledger-reader.ts',
    'src/store/ledger-upkeep.ts',
    'src/store/change-report.ts',
    'src/run/change-listing.ts',
    'src/run/refresh-order.ts',
    'src/cli/charged-call.ts',
    'src/cli/budget-flags.ts',
  ],
  coverageAnalysis: 'perTest',
  incremental: true,
  incrementalFile: 'coverage/mutation/incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'coverage/mutation/mutation.html' },
  jsonReporter: { fileName: 'coverage/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: 80 },
  // Two cores, shared: one test process per core at most.
  concurrency: 2,
  // Some integration tests wait on short windows; a slow machine must not turn them into timeouts.
  timeoutMS: 10_000,
  tempDirName: scratch,
  cleanTempDir: 'always',
};

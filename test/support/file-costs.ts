// The measured cost of the longest test files, by which test/support/longest-first.ts starts them
// first (docs/development.md, "How the suite spends its time").

/**
 * Seconds each file took in a whole run with four e2e files at a time, at a load average of about 7
 * (the simulation's from its idle time, scaled alike): only their order counts.
 */
export const COSTS: Record<string, number> = {
  'test/e2e/install-from-clone.test.ts': 145,
  'test/e2e/reliability/durability.test.ts': 135,
  'test/e2e/spending.test.ts': 122,
  'test/e2e/answer-changes.test.ts': 116,
  'test/e2e/nights.test.ts': 110,
  'test/e2e/cron-recipes-over-months.test.ts': 100,
  'test/e2e/cluster.test.ts': 97,
  'test/e2e/readme-recipes.test.ts': 95,
  'test/e2e/help-examples.test.ts': 93,
  'test/e2e/cli-messages.test.ts': 82,
  'test/e2e/option-rules.test.ts': 74,
  'test/e2e/workbook-paid-work.test.ts': 67,
  'test/e2e/input-controls.test.ts': 65,
  'test/e2e/spreadsheets.test.ts': 64,
  'test/e2e/reliability/api-outage.test.ts': 60,
  'test/e2e/workbook-shows-what-it-holds.test.ts': 59,
  'test/e2e/progress-cli.test.ts': 56,
  'test/e2e/reliability/kills.test.ts': 55,
  'test/e2e/bad-stores.test.ts': 54,
};

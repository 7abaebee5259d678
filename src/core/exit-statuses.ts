// The exit statuses of `enrich`, declared once, in the order every listing gives them
// (docs/cli-contract.md, "Exit status of `enrich`"): `enrich --help` prints `help`, the run
// report says `short`, and test/unit/vocabulary.test.ts holds the docs' tables to the same
// statuses, in the same order, naming the same row codes.

export interface ExitStatus {
  status: 0 | 1 | 2 | 3 | 4 | 5 | 130;
  /** The meaning in a few words (the run report, after the outcome). */
  short: string;
  /** The meaning as `enrich --help` prints it: lines of at most 71 characters, so that with the status before them an 80-column terminal shows them as written. */
  help: readonly string[];
}

export const EXIT_STATUSES: readonly ExitStatus[] = [
  {
    status: 0,
    short: 'every row found or not found, or skipped with no key or complete',
    help: ['every row found or not found (or skipped: an empty key, or complete', 'with --fill/--only-missing)'],
  },
  {
    status: 2,
    short: 'rows in error for a reason of the API or the network, or the API stayed down past --patience',
    help: [
      'at least one row is an error for a reason of the API or the network,',
      'or the API stayed down past --patience (the rows not looked up are',
      'skipped: api_unavailable); see the sidecar',
    ],
  },
  {
    status: 5,
    short: "the only errors are the file's own (malformed or refused keys)",
    help: [
      "the API worked, and the only errors are the file's own: malformed keys",
      '(invalid_input) or keys the API refused (bad_request); cron and CI',
      'jobs accept 0 and 5',
    ],
  },
  {
    status: 3,
    short: 'stopped early by the account: the credit reserve, a --budget of the run, the day or the month, or the daily limit',
    help: [
      'stopped early by the account: the credit reserve, a --budget of the',
      'run, the day or the month, or the daily limit; the rows not looked up',
      'are skipped (credit_reserve, budget, daily_limit); also a --dry-run',
      'that does not fit',
    ],
  },
  {
    status: 4,
    short: 'stopped at --max-errors',
    help: ['stopped at --max-errors; the rows not looked up are skipped', '(max_errors)'],
  },
  {
    status: 1,
    short: 'fatal',
    help: ['fatal: bad usage or configuration, unreadable input, rejected token,', 'an operation the token may not use (403); nothing written'],
  },
  {
    status: 130,
    short: 'interrupted',
    help: ['interrupted (SIGINT/SIGTERM; a second Ctrl-C quits at once); outputs', 'are complete'],
  },
];

/** The listing `enrich --help` ends with. */
export function exitStatusesHelp(): string {
  const lines = EXIT_STATUSES.flatMap(({ status, help }) => help.map((line, i) => `${(i === 0 ? `  ${status}` : '').padEnd(7)}${line}`));
  return ['Exit statuses:', ...lines].join('\n');
}

/** The few words of `status`, or '' for one `enrich` never exits with. */
export function exitStatusShort(status: number): string {
  return EXIT_STATUSES.find((e) => e.status === status)?.short ?? '';
}

// Why lookups stop, and everything each reason means, declared once (docs/cli-contract.md, "Exit
// status of `enrich`" and "The error sidecar"): the row a lookup it turns away becomes, the exit
// status of a run it stops, what happens to the requests queued and in flight, and its words in the
// summary, the one line of `-q` and the run report. The run's one stop (run/run-stop.ts), the exit
// status (run/exit-status.ts), the summary (cli/summary-text.ts) and the report read this table;
// the order of its rows is the order the reasons are told in when several stopped a run.
import type { ErrorCode } from '../api/errors.js';
import { optionWord } from '../options/option-table.js';

/** What a reason's words may name: the run's figures that the table's sentences carry. */
export interface StopFacts {
  /** Where an account stop bound, "the credit reserve", "--budget 200/day". */
  at: string;
  /** What the budget that bound had spent, "(196 of 200 credits spent today; …)", or ''. */
  spent: string;
  /** --patience, "5m". */
  patience: string;
  /** The time the API was unavailable in all, "7m 3s". */
  unavailableFor: string;
  /** The last failure of an API that stayed unavailable. */
  apiFailure: string | undefined;
}

export interface StopWords {
  /** How the summary's first line says where the run stopped, before its exit status: "Stopped early at the credit reserve". */
  outcome: (f: StopFacts) => string;
  /** The first line names the sidecar too: the rows in error there are what stopped the run. */
  seeSidecar?: true;
  /** The summary's closing line: what happened and what to do. */
  summary: (f: StopFacts) => string;
  /** `-q`'s one line, before the counts. */
  quiet: (f: StopFacts) => string;
  /** The run report's paragraph under its headline. */
  report: string;
  /** The run report's headline, for a reader who does not know exit statuses. */
  reportOutcome: (f: StopFacts) => string;
}

export interface Stop {
  /**
   * What a row not looked up because of it becomes (the sidecar's status and code); `error` only
   * for Redis lost, whose row carries the lost link's own code. A halt's rows are `interrupted`.
   */
  row: { kind: 'skipped' | 'error'; code: ErrorCode; message: () => string };
  /** The exit status of a run it stops. */
  exit: 1 | 2 | 3 | 4 | 130;
  /**
   * `drop`: no queued request and no retry is sent any more (the gate drops its queue); `finish`:
   * only paid lookups stop, requests in flight finish and answers the store knows are still written.
   */
  queue: 'drop' | 'finish';
  /** Requests in flight give up their retries and rows in flight are drained. */
  halts: boolean;
  /** The run that ends reports it as `stoppedBy` (the others end the run with an error): its words. */
  words?: StopWords;
}

const interrupted = { kind: 'skipped', code: 'interrupted', message: () => 'not looked up: the run was stopped' } as const;
const again = 'run the same command again';

export const STOPS = {
  redis: {
    row: { kind: 'error', code: 'redis_unavailable', message: () => 'Redis was lost' },
    exit: 2,
    queue: 'drop',
    halts: false,
    words: {
      outcome: () => 'Stopped: Redis was lost',
      summary: () => 'Stopped early: Redis was lost; the rows not looked up are marked redis_unavailable. Run the same command again.',
      quiet: () => 'Redis was lost',
      report: 'Stopped early: Redis was lost. Run the same command again.',
      reportOutcome: () => 'Stopped: the connection to Redis was lost. Running the same command again finishes the work.',
    },
  },
  interrupt: {
    row: interrupted,
    exit: 130,
    queue: 'drop',
    halts: true,
    words: {
      outcome: () => 'Interrupted',
      summary: () => 'Interrupted: run the same command again to finish; answers already paid for are reused.',
      quiet: () => 'interrupted',
      report: 'Interrupted. The rows not looked up are skipped (interrupted); run the same command again to finish.',
      reportOutcome: () => 'Interrupted before the end. Running the same command again finishes the work.',
    },
  },
  // 401, and 403/1008 or 415 (the token may not use the operation): as an interrupt, then the run
  // fails once what was paid for is stored.
  unauthorized: { row: interrupted, exit: 1, queue: 'drop', halts: true },
  forbidden: { row: interrupted, exit: 1, queue: 'drop', halts: true },
  // The store or an output could not be written (a full disk, a damaged store): as an interrupt, so
  // that the answers in flight still reach the store where it has room; the run leaves no output.
  failed: { row: interrupted, exit: 1, queue: 'drop', halts: true },
  // Codes 1017/1032: nothing can pass before the next day, so no retry either.
  daily_limit: {
    row: { kind: 'skipped', code: 'daily_limit', message: () => `not looked up: the account's daily limit was reached; ${again} the next day` },
    exit: 3,
    queue: 'drop',
    halts: false,
    words: {
      outcome: () => "Stopped early at the account's daily limit",
      summary: () => "Stopped early: the account's daily limit was reached; run the same command again the next day to finish.",
      quiet: () => `stopped at the account's daily limit; ${again} the next day`,
      report:
        "Stopped early: the account's daily limit was reached. The rows not looked up are skipped (daily_limit); run the same command again the next day.",
      reportOutcome: () => "Stopped early: the account's daily limit was reached. Run the same command again the next day to finish.",
    },
  },
  max_errors: {
    row: { kind: 'skipped', code: 'max_errors', message: () => `not looked up: the run stopped at ${optionWord('maxErrors')}` },
    exit: 4,
    queue: 'drop',
    halts: false,
    words: {
      outcome: () => 'Stopped at --max-errors',
      seeSidecar: true,
      summary: () => 'Stopped at --max-errors: too many lookups failed (see the sidecar); fix the cause and run the same command again.',
      quiet: () => 'stopped at --max-errors',
      report: 'Stopped at --max-errors: too many lookups failed. The rows not looked up are skipped (max_errors).',
      reportOutcome: () => 'Stopped early: too many lookups failed (--max-errors). Fix the cause and run the same command again.',
    },
  },
  api_unavailable: {
    row: { kind: 'skipped', code: 'api_unavailable', message: () => `not looked up: the API stayed unavailable longer than ${optionWord('patience')}` },
    exit: 2,
    queue: 'drop',
    halts: false,
    words: {
      outcome: () => 'Stopped: the API stayed unavailable',
      // The time is the run's total: an API that came and went may have been down longer in all
      // than --patience, which is per outage.
      summary: (f) =>
        `Stopped: the API stayed unavailable past --patience (${f.patience}; unavailable for ${f.unavailableFor} in all); the rows not looked up are skipped with api_unavailable. Run the same command again to finish.`,
      quiet: (f) => `the API stayed unavailable past --patience (${f.patience})${f.apiFailure ? `, failing with: ${f.apiFailure}` : ''}`,
      report:
        'Stopped: the API stayed unavailable past --patience. The rows not looked up are skipped (api_unavailable); run the same command again to finish.',
      reportOutcome: () => 'Stopped: the API stayed unavailable. Running the same command again finishes the work.',
    },
  },
  // The reserve was reached, or a 402: no new paid request.
  credits: {
    row: { kind: 'skipped', code: 'credit_reserve', message: () => 'not looked up: the credit balance reached the reserve' },
    exit: 3,
    queue: 'finish',
    halts: false,
    words: {
      outcome: () => 'Stopped early at the credit reserve',
      summary: () => 'Stopped early: the credit reserve was reached; add credits and run the same command again to finish.',
      quiet: () => 'stopped at the credit reserve',
      report: 'Stopped early: the credit reserve was reached. The rows not looked up are skipped (credit_reserve); add credits and run the same command again.',
      reportOutcome: () => 'Stopped early: the account reached its credit reserve. Add credits and run the same command again to finish.',
    },
  },
  // The next request could spend past --budget: as the reserve.
  budget: {
    row: { kind: 'skipped', code: 'budget', message: () => 'not looked up: the next lookup could have spent more than --budget' },
    exit: 3,
    queue: 'finish',
    halts: false,
    words: {
      outcome: (f) => `Stopped early ${f.at}`,
      summary: (f) =>
        `Stopped early: the next lookup could have spent more than ${f.at.slice(3)}${f.spent}; ${again} (then, or with a larger --budget) to finish.`,
      quiet: (f) => `stopped ${f.at}${f.spent}`,
      report:
        'Stopped early: the next lookup could have spent more than --budget. The rows not looked up are skipped (budget); run the same command again with a budget that allows them.',
      reportOutcome: (f) =>
        `Stopped early: ${f.at.slice(3)} was reached. Run the same command again when its period resets (or with a larger budget) to finish.`,
    },
  },
} as const satisfies Record<string, Stop>;

/** Why lookups stop: one word each, the summary's `stoppedBy` for those that have words. */
export type StopReason = keyof typeof STOPS;

/** The reasons a run that ends reports as having stopped it early (the summary's `stoppedBy`). */
export type StoppedBy = { [R in StopReason]: (typeof STOPS)[R] extends { words: StopWords } ? R : never }[StopReason];

/** The reasons in the order they are told in when several stopped a run. */
export const STOP_ORDER = Object.keys(STOPS) as StopReason[];

/** A reason's row of the table. */
export function stopOf(reason: StopReason): Stop {
  return STOPS[reason];
}

/** The words of a reason the summary may name. */
export function stopWords(reason: StoppedBy): StopWords {
  return STOPS[reason].words;
}

// Every option of a run, one row each: its flag (and alias), the environment variable that stands
// in for the flag, whether it is a config-file key and an option of enrich() (under the row's
// name), the rule its value follows, its default and its help text. The command line's flags, the
// config file's keys, the library's known names and the help's defaults are all read from here, so
// adding an option is one row plus the code that uses it. The rows are in the order --help lists
// them; the library's types, with the text a caller reads on hover, are RunOptionInputs below.
import type { Extra, LookupKind } from '../core/kinds.js';
import { durationMs, formatDuration } from '../core/duration.js';
import { DEFAULT_TIMEOUT_MS } from '../api/request-timeout.js';
import { DEFAULTS } from './defaults.js';
import * as rules from './rules.js';
import { helpIn, type OptionRow } from './option-row.js';

export { argName, type OptionRow } from './option-row.js';

const string = 'string';
const number = 'number';
const boolean = 'boolean';
const IN = { config: true, library: true } as const;

export const OPTIONS = {
  config: { flag: 'config', type: string, env: 'LEAD_ENRICH_CONFIG', help: 'JSON config file (see config.example.json)' },
  baseUrl: { flag: 'base-url', type: string, env: 'LEAD_API_BASE_URL', ...IN, rule: rules.nonEmptyString, help: 'API base URL ending in /v2 (env {env})' },
  sandbox: {
    flag: 'sandbox',
    type: boolean,
    help: 'Start the embedded sandbox server and run against it (its answers are stored in results.sandbox.sqlite beside the default store, never in it)',
  },
  timeoutMs: {
    flag: 'request-timeout',
    type: number,
    ...IN,
    rule: rules.timerMs,
    default: DEFAULT_TIMEOUT_MS,
    help: 'Per-request timeout in ms (default {default})',
  },
  output: {
    flag: 'output',
    alias: 'o',
    type: string,
    library: true,
    help: 'enriched output: .csv, .jsonl or .xlsx; - for stdout (default <input>.enriched.csv, .xlsx for an .xlsx input)',
  },
  errors: { flag: 'errors', type: string, library: true, help: 'error sidecar CSV (default <output>.errors.csv)' },
  by: {
    flag: 'by',
    type: string,
    ...IN,
    rule: rules.kinds,
    help: 'lookup: email | url | domain, or a waterfall tried in order: email,url (default: from the header)',
  },
  column: {
    flag: 'column',
    type: string,
    ...IN,
    rule: rules.columns,
    help: 'input column holding the key; once per kind of a waterfall; a position with --no-header (default: from the header)',
  },
  delimiter: {
    flag: 'delimiter',
    alias: 'd',
    type: string,
    ...IN,
    rule: rules.delimiter,
    help: "the input's field delimiter: one character, or tab (default: detected among , ; tab |)",
  },
  tabs: { flag: 'tabs', alias: 't', type: boolean, help: 'the input is tab-separated (same as --delimiter tab)' },
  encoding: {
    flag: 'encoding',
    type: string,
    ...IN,
    rule: rules.encoding,
    help: "the input's encoding, any WHATWG label: utf-8, utf-16le, windows-1252, ... (default: detected)",
  },
  sheet: {
    flag: 'sheet',
    type: string,
    ...IN,
    rule: rules.sheet,
    help: 'the worksheet of an .xlsx input: its name or position, e.g. Leads or 2 (default: the first)',
  },
  header: {
    flag: 'header',
    type: boolean,
    ...IN,
    rule: rules.yesOrNo,
    default: true,
    help: 'the first line is a header; --no-header: it is data (columns column_1, ...; --column N is a position)',
  },
  // A string, not an array flag: `--with mx contacts.csv` would take the file name as a second
  // value. A comma list, or the flag repeated.
  with: {
    flag: 'with',
    type: string,
    ...IN,
    rule: rules.extras,
    help: "also look up the row's domain: mx, whois, and/or company (the company by domain; never a free mail domain): mx,company",
  },
  prefix: {
    flag: 'prefix',
    type: string,
    ...IN,
    rule: rules.prefix,
    default: '',
    help: 'put this before the name of every added column, e.g. to enrich an enriched file again',
  },
  fields: {
    flag: 'fields',
    type: string,
    ...IN,
    rule: rules.fields,
    help: 'keep only these added columns, in this order: lead_name,lead_title (lead_status is always kept); lead.MEMBER adds any member of the lead, e.g. lead.phones',
  },
  fill: {
    flag: 'fill',
    type: string,
    ...IN,
    rule: rules.fill,
    help: "fill blank cells of the input's own columns from the answer: Title=lead_title,Company=lead_company_name (adds only lead_status)",
  },
  overwrite: { flag: 'overwrite', type: boolean, ...IN, rule: rules.yesOrNo, default: false, help: 'with --fill: replace cells that hold a value too' },
  onlyMissing: {
    flag: 'only-missing',
    type: string,
    ...IN,
    rule: rules.columnNames,
    help: 'look up only rows where one of these columns is blank: Title,Company (the others: skipped, complete)',
  },
  report: {
    flag: 'report',
    type: string,
    ...IN,
    rule: rules.reportFile,
    help: 'write a run report at the end: FILE.html (charts, one self-contained page) or FILE.json',
  },
  skipLines: {
    flag: 'skip-lines',
    type: number,
    ...IN,
    rule: rules.nonNegativeInteger,
    help: "the first N lines are not the table: a report's title lines above the header (default: one-cell lines above it are detected)",
  },
  limit: {
    flag: 'limit',
    type: number,
    ...IN,
    rule: rules.positiveInteger,
    help: 'only the first N data rows, to try a file before the whole run (the output is partial, and says so)',
  },
  yes: {
    flag: 'yes',
    alias: 'y',
    type: boolean,
    help: 'do not ask before a run that may spend more than confirmAbove credits (config; default {default of confirmAbove}); nothing is asked without a terminal',
  },
  confirmAbove: { config: true, rule: rules.nonNegativeInteger, default: 1000 },
  rpm: { flag: 'rpm', type: number, ...IN, rule: rules.positiveInteger, help: 'requests per minute (default: from /account/limits)' },
  concurrency: {
    flag: 'concurrency',
    type: number,
    ...IN,
    rule: rules.positiveInteger,
    help: 'most requests in flight (default: sized from rate and latency)',
  },
  minCredits: {
    flag: 'min-credits',
    type: number,
    ...IN,
    rule: rules.nonNegativeInteger,
    help: "credit reserve never spent (default: the account's low-balance threshold)",
  },
  // A string, repeatable: `--budget 2000/day --budget 20000/month`.
  budget: {
    flag: 'budget',
    type: string,
    ...IN,
    rule: rules.budgets,
    help: 'spend at most N credits in this run, N/day or N/month in a UTC day or month across every run on the store (or --redis); repeatable; exit 3 when one binds',
  },
  retries: {
    flag: 'retries',
    type: number,
    ...IN,
    rule: rules.nonNegativeInteger,
    default: DEFAULTS.retries,
    help: 'retries of a transient failure (default {default})',
  },
  dryRun: { flag: 'dry-run', type: boolean, help: 'plan only: keys, known answers, credits and time needed; no lookup' },
  json: { flag: 'json', type: boolean, help: 'print the summary (or the dry-run plan) as one JSON object on stdout' },
  format: {
    flag: 'format',
    type: string,
    ...IN,
    rule: rules.oneOf(['csv', 'jsonl', 'xlsx'] as const),
    help: 'enriched output format: csv, jsonl or xlsx (default: from the output name, else xlsx for an .xlsx input, else csv)',
  },
  store: {
    flag: 'store',
    type: string,
    env: 'LEAD_ENRICH_STORE',
    ...IN,
    rule: rules.nonEmptyString,
    help: 'result store path (env {env}; default: per-user cache, results.sandbox.sqlite there with --sandbox)',
  },
  maxAge: {
    flag: 'max-age',
    type: string,
    ...IN,
    rule: durationMs,
    default: 30 * 24 * 3_600_000,
    show: formatDuration,
    help: 'reuse stored answers younger than this (default {default})',
  },
  // The older spelling of maxAge, in milliseconds: the library's only.
  maxAgeMs: { library: true, rule: rules.nonNegativeInteger },
  refresh: { flag: 'refresh', type: boolean, ...IN, rule: rules.yesOrNo, default: false, help: 'ignore answers stored by earlier runs' },
  changes: {
    flag: 'changes',
    type: string,
    ...IN,
    rule: rules.changesFile,
    help: 'write what changed in the answers of keys looked up again (older than --max-age, or --refresh) to this file, one line per changed field (CSV; .jsonl or .xlsx by the name; - for stdout), and add the column lead_changed',
  },
  quiet: {
    flag: 'quiet',
    alias: 'q',
    type: boolean,
    help: 'no progress and no summary on success (a run that does not exit 0 still prints its one-line summary)',
  },
  // The command line's: a program has the summary object and writes no log lines (docs/reference.md, "In a CI step").
  ci: {
    flag: 'ci',
    type: string,
    config: true,
    rule: rules.oneOf(['auto', 'github', 'gitlab', 'none'] as const),
    default: 'auto',
    help: 'in a CI step, speak its conventions (job summary, annotations, step outputs, log groups): auto, github, gitlab or none (default {default}: GitHub Actions under GITHUB_ACTIONS=true, GitLab under GITLAB_CI=true)',
  },
  ciSummary: {
    flag: 'ci-summary',
    type: string,
    config: true,
    rule: rules.summaryFile,
    help: "also write the job summary's Markdown to this file (appended), under any CI or none",
  },
  maxErrors: {
    flag: 'max-errors',
    type: string,
    ...IN,
    rule: rules.errorLimit,
    help: "stop looking up once more than N rows (or N% of the rows looked up, judged after 50) are errors of the API's; exit 4",
  },
  patience: {
    flag: 'patience',
    type: string,
    ...IN,
    rule: durationMs,
    default: DEFAULTS.patienceMs,
    show: formatDuration,
    help: 'how long to wait for an API that is down before giving up on it (default {default}); then exit 2, the rest skipped',
  },
  redis: {
    flag: 'redis',
    type: string,
    env: 'LEAD_ENRICH_REDIS',
    ...IN,
    rule: rules.nonEmptyString,
    help: 'share rate limit, credit reserve and answers with other workers (env {env})',
  },
  shard: { flag: 'shard', type: string, ...IN, rule: rules.shard, help: 'process only shard K of N of the rows (stable hash of the key), e.g. 2/4' },
  // The library's is tuning.windowMs.
  windowMs: {
    flag: 'rate-window',
    type: number,
    config: true,
    rule: rules.positiveInteger,
    default: DEFAULTS.windowMs,
    help: "the server's rate window in ms (default {default}; for a sandbox run with --window-ms)",
  },
  token: { env: 'LEAD_API_TOKEN', ...IN, rule: rules.nonEmptyString },
  tokenFile: { config: true, rule: rules.nonEmptyString },
  proxy: { ...IN, rule: rules.proxyUrl },
} as const satisfies Record<string, OptionRow>;

export type OptionName = keyof typeof OPTIONS;
type Row<K extends OptionName> = (typeof OPTIONS)[K];
/** The options that have a rule (all but the command line's own switches). */
export type RuledName = { [K in OptionName]: Row<K> extends { rule: rules.Rule<unknown> } ? K : never }[OptionName];
export type OptionValue<K extends RuledName> = ReturnType<Row<K>['rule']>;

const names = (has: (row: OptionRow) => boolean) => (Object.keys(OPTIONS) as OptionName[]).filter((name) => has(OPTIONS[name]));
/** The config file's keys. */
export const CONFIG_KEYS: readonly OptionName[] = names((row) => row.config === true);
/** The options of enrich() that have a row. */
export const LIBRARY_NAMES: readonly OptionName[] = names((row) => row.library === true);
/** The rows that are flags, in the order --help lists them. */
export const FLAG_NAMES: readonly OptionName[] = names((row) => row.flag !== undefined);

/** The options of enrich() that have a rule: each is a setting of the run, under its own name. */
export type LibraryName = { [K in RuledName]: Row<K> extends { library: true } ? K : never }[RuledName];
export const LIBRARY_RULED = names((row) => row.library === true && row.rule !== undefined) as readonly LibraryName[];
/**
 * What a run reads of each option of enrich(): the value by its rule, else its default; undefined
 * only for an option without a default (its absence then means something of its own).
 */
export type OptionSettings = { [K in LibraryName]: Row<K> extends { default: unknown } ? OptionValue<K> : OptionValue<K> | undefined };

/** The row of `name`, as any row. */
export const row = (name: OptionName): OptionRow => OPTIONS[name];

/** The option's default, or undefined when it has none (then its absence means something of its own). */
export function defaultOf<K extends RuledName>(name: K): OptionValue<K> | undefined {
  return row(name).default as OptionValue<K> | undefined;
}

/** The flag as typed, `--max-age`. */
export const flagOf = (name: OptionName): string => `--${row(name).flag ?? name}`;

/** The help text of a flag, its environment variable and defaults filled in from the rows. */
export const helpOf = (name: OptionName): string => helpIn(OPTIONS, name);

type Camel<S extends string> = S extends `${infer A}-${infer B}` ? `${A}${Capitalize<Camel<B>>}` : S;
type ArgOf<R> = R extends { type: 'boolean' } ? boolean : R extends { type: 'number' } ? number | string : string;
/** The command line's values as yargs parsed them, under the flags' camel-case names: raw, for the rules to read. */
export type FlagArgs = { [K in OptionName as Row<K> extends { flag: infer F extends string } ? Camel<F> : never]?: ArgOf<Row<K>> };

/**
 * The options of enrich() that follow a rule of the rows above, as a library caller gives them.
 * EnrichOptions (run/enrich-options.ts) adds those whose types belong to other layers.
 */
export interface RunOptionInputs {
  /** The input's field delimiter: one character, or 'tab'. Default: detected (, ; tab |). */
  delimiter?: string | undefined;
  /** The input's encoding: any WHATWG label. Default: detected (BOM, else UTF-8 if valid, else windows-1252). */
  encoding?: string | undefined;
  /** The first line is a header (default true). false: it is data, and `column` is a 1-based position. */
  header?: boolean | undefined;
  /** Which lookup: one kind, or a waterfall tried in order (`['email', 'url']` or 'email,url'). Default: detected. */
  by?: LookupKind | LookupKind[] | string | undefined;
  /** The key column: one name, or one per kind of a waterfall, in the same order. Default: detected. */
  column?: string | string[] | undefined;
  with?: Extra[] | undefined;
  /** 'xlsx': an Excel workbook. Default: what the output's name says, else a workbook for an .xlsx input written beside it, else CSV. */
  format?: 'csv' | 'jsonl' | 'xlsx' | undefined;
  /** The worksheet of an .xlsx input: its name, or its 1-based position. Default: the first. */
  sheet?: string | number | undefined;
  /** Put this before the name of every added column (`lead_status` too), e.g. to enrich an enriched file again. */
  prefix?: string | undefined;
  /** Keep only these added columns (`lead_status` is always kept), in this order: a list, or a comma-separated string. */
  fields?: string[] | string | undefined;
  /**
   * Fill blank cells of the input's own columns from the answer: `'Title=lead_title,Company=lead_company_name'`,
   * a list of such pairs, `{ Title: 'lead_title' }`, or `[{ column: 'Title', field: 'lead_title' }]`. A field is any added column's name (as `fields`
   * names them). Only `lead_status` is added then, unless `fields` names more. A row whose cells in
   * these columns all hold values is not looked up (`skipped`, `complete`).
   */
  fill?: string | string[] | Record<string, string> | ReadonlyArray<{ column: string; field: string }> | undefined;
  /** With `fill`: replace cells that hold a value too (such rows are looked up). */
  overwrite?: boolean | undefined;
  /** Look up only rows where at least one of these input columns is blank; the others are `skipped`, `complete`. */
  onlyMissing?: string | string[] | undefined;
  /** Write a run report here at the end of the run (also a stopped one): HTML or JSON by the extension. */
  report?: string | undefined;
  /** Lines above the header that are not the table (a report's title lines). Default: detected. */
  skipLines?: number | undefined;
  /** Only the first N data rows (a try before the whole file); the summary says the run is partial. */
  limit?: number | undefined;

  baseUrl?: string | undefined;
  token?: string | undefined;
  /** Per-request timeout in ms of the client the run makes from baseUrl and token (default 30000). */
  timeoutMs?: number | undefined;
  /** A proxy URL for the client the run makes; default: HTTPS_PROXY / HTTP_PROXY / NO_PROXY. */
  proxy?: string | undefined;

  /** Requests per minute; default sized from /account/limits. */
  rpm?: number | undefined;
  /** Most requests in flight; default sized from rate and latency. */
  concurrency?: number | undefined;
  /** Credits never to spend; default low_credit_balance_min_threshold. */
  minCredits?: number | undefined;
  /**
   * Spend at most N credits: `200` (a number or its text) in this run, `'200/day'` or `'5000/month'`
   * in a UTC calendar day or month across every run on the same store (or Redis); a list for
   * several. The rows not looked up once one binds are `skipped`/`budget`.
   */
  budget?: number | string | ReadonlyArray<number | string> | undefined;
  /** Retries of a transient failure. Default 4. */
  retries?: number | undefined;

  /** Stored answers older than this are fetched again: a duration ('30d', '12h'). Default 30 days. */
  maxAge?: string | undefined;
  /** The same in milliseconds (the older spelling; `maxAge` wins when both are given). */
  maxAgeMs?: number | undefined;
  /** Ignore answers stored by earlier runs. */
  refresh?: boolean | undefined;
  /**
   * A CSV file listing what changed in the answers of keys looked up again (older than `maxAge`,
   * or `refresh`): `row,key,field,before,after,before_fetched_at,after_fetched_at`, one line per
   * changed field; the output gains the column `lead_changed`. Changes are counted in the summary
   * (`changed`) without it too.
   */
  changes?: string | undefined;

  /**
   * Stop looking up once more than this many looked-up rows are `error` (a number, or a
   * percentage such as '5%' of the rows looked up, judged after 50): the rest are `skipped`
   * with `max_errors`, and the summary's stoppedBy is 'max_errors'.
   */
  maxErrors?: number | string | { count: number } | { percent: number } | undefined;

  /**
   * How long to wait for an API that is down before giving up on it: a duration ('10m', '30s').
   * Default 10m. Then the rows not looked up are `skipped` with `api_unavailable` (docs/cli-contract.md,
   * "An API that fails"), and the summary's stoppedBy is 'api_unavailable'.
   */
  patience?: string | undefined;

  /** Share the rate limit, credit reserve and answers with other workers through this Redis. */
  redis?: string | undefined;
}

// `lead-enrich enrich <input>`: a thin shell over enrich() (src/run/enrich.ts): options,
// signals, progress, summary and the exit status of docs/cli-contract.md.
// The pipeline, the store and the progress bar are imported when the command runs, not when
// the command line is parsed: `--help` stays fast (a
// completion or a `--help` in a script must not pay for loading the whole pipeline).
import type { CommandModule } from 'yargs';
import type { EnrichOptions } from '../run/enrich-options.js';
import type { EnrichSummary } from '../run/summary.js';
import type { DryRunPlan } from '../run/dry-run.js';
import { ConfigError } from '../api/errors.js';
import { formatDuration } from '../core/duration.js';
import { readOption, type OptionName, type OptionValue } from '../options/option-table.js';
import { examplesText } from './help-examples.js';
import { printJson, type CliIo } from './io.js';
import { openTarget, targetOptions, type Target, type TargetArgs } from './target.js';
import { STDIN_ARGUMENT } from './stdin-argument.js';
import { asTyped } from './number-flags.js';
import { noticeLines, stderrLines } from './stderr-lines.js';
import { exitStatusOf } from '../run/exit-status.js';
import { DEFAULTS } from '../options/defaults.js';
import { PUBLISHED_FOUND_COST } from '../lookup/credits.js';
import { askOnTerminal, saidYes } from './ask-user.js';

interface EnrichArgs extends TargetArgs {
  input: string;
  output?: string;
  errors?: string;
  by?: string;
  column?: string | string[];
  delimiter?: string;
  tabs?: boolean;
  encoding?: string;
  header?: boolean;
  sheet?: string;
  with?: string[];
  rpm?: number | string;
  concurrency?: number | string;
  minCredits?: number | string;
  budget?: number | string;
  retries?: number | string;
  dryRun?: boolean;
  json?: boolean;
  format?: string;
  store?: string;
  maxAge?: string;
  refresh?: boolean;
  quiet?: boolean;
  redis?: string;
  shard?: string;
  rateWindow?: number | string;
  maxErrors?: string;
  patience?: string;
  prefix?: string;
  fields?: string;
  fill?: string;
  overwrite?: boolean;
  onlyMissing?: string;
  report?: string;
  skipLines?: number | string;
  limit?: number | string;
  yes?: boolean;
}

/** Exit statuses of `enrich` (docs/cli-contract.md). */
export { exitStatusOf };

/** "about 4m 10s at 600 RPM": whole seconds, in the units that fit (not "about 0.05 minutes"). */
function timeNeeded(plan: DryRunPlan): string {
  if (plan.lookupsToMake === 0) return 'none: no lookup to make';
  const seconds = Math.max(1, Math.ceil((plan.lookupsToMake * 60) / plan.rpm));
  return `about ${formatDuration(seconds * 1000)} at ${plan.rpm} RPM`;
}

function formatPlan(plan: DryRunPlan): string {
  const per = (record: Record<string, number>) =>
    Object.entries(record)
      .map(([op, n]) => `${op} ${n}`)
      .join(', ') || '0';
  return [
    `Rows: ${plan.rows} (${plan.invalidRows} with an invalid key, ${plan.noKeyRows} with an empty key: no request for either)`,
    ...(plan.completeRows > 0 || plan.lookupsSaved > 0
      ? [`Complete rows (their cells hold values: skipped, no request): ${plan.completeRows}, saving at most ${plan.lookupsSaved} lookups (${plan.creditsSaved} credits)`]
      : []),
    `Lookup: ${plan.lookup.order.map((t) => `${t.kind} from column "${t.column}"`).join(', then ')}${plan.lookup.with.length ? ` with ${plan.lookup.with.join(', ')}` : ''}`,
    `Distinct keys: ${per(plan.distinctKeys)}`,
    `Already known (free): ${per(plan.alreadyKnown)}`,
    `Lookups to make: ${plan.lookupsToMake === plan.lookupsExpected ? plan.lookupsToMake : `at most ${plan.lookupsToMake}, expected ${plan.lookupsExpected} (a waterfall stops at the first found)`}`,
    `Credits needed: at most ${plan.creditsNeeded} (${plan.creditsEstimate})`,
    `Time needed: ${timeNeeded(plan)}`,
    plan.accountRead
      ? `Balance: ${plan.balance}, reserve ${plan.reserve}: ${plan.fits ? 'it fits' : 'it does NOT fit; the run would stop at the reserve (exit 3)'}`
      : 'Balance: not read (no lookup to make, so the API was not asked)',
    ...(plan.budget ? [`Budget: ${plan.budget.limit} credits: ${plan.budget.covers ? 'it covers the credits needed' : 'it does NOT cover the credits needed; the run would stop at --budget (exit 3)'}`] : []),
    ...(plan.warning ? [`Warning: ${plan.warning}`] : []),
  ].join('\n');
}

export function enrichCommand(io: CliIo): CommandModule<object, EnrichArgs> {
  return {
    command: 'enrich <input>',
    describe: 'Enrich a CSV or .xlsx file (or - for stdin): enriched CSV (or .xlsx) + error sidecar',
    builder: (yargs) => enrichOptions(targetOptions(yargs)) as never,
    handler: async (args) => {
      const target = await openTarget(args, noticeLines(io));
      warnOfRedisPassword(args.redis, noticeLines(io));
      try {
        const options = optionsFrom(args, target);
        if (args.dryRun) await dryRun(io, options, args.json ?? false);
        else if (args.yes || (await confirmed(io, options, target.config.file.confirmAbove ?? DEFAULTS.confirmAbove))) await run(io, options, args);
      } finally {
        await target.close();
      }
    },
  };
}

// Lines of at most 78 characters, the continuations indented: an 80-column terminal shows them as written.
const EXIT_STATUSES = [
  'Exit statuses:',
  '  0    every row found or not found (or skipped: an empty key, or complete',
  '       with --fill/--only-missing)',
  '  1    fatal: bad usage or configuration, unreadable input, rejected token,',
  '       an operation the token may not use (403); nothing written',
  '  2    at least one row is an error for a reason of the API or the network,',
  '       or the API stayed down past --patience (the rows not looked up are',
  '       skipped); see the sidecar',
  "  5    the API worked, and the only errors are the file's own: malformed keys",
  '       (invalid_input) or keys the API refused (bad_request); cron and CI',
  '       jobs accept 0 and 5',
  '  3    stopped early by the account: the credit reserve, --budget or the',
  '       daily limit; the rows not looked up are skipped (credit_reserve,',
  '       budget, daily_limit)',
  '  4    stopped at --max-errors; the rows not looked up are skipped',
  '  130  interrupted (SIGINT/SIGTERM; a second Ctrl-C quits at once); outputs',
  '       are complete',
].join('\n');

function enrichOptions<T>(yargs: import('yargs').Argv<T>) {
  return yargs
    .positional('input', { type: 'string', describe: 'CSV or .xlsx file, or - for stdin (CSV)', demandOption: true })
    .option('output', { alias: 'o', type: 'string', requiresArg: true, describe: 'enriched output: .csv, .jsonl or .xlsx; - for stdout (default <input>.enriched.csv, .xlsx for an .xlsx input)' })
    .option('errors', { type: 'string', requiresArg: true, describe: 'error sidecar CSV (default <output>.errors.csv)' })
    .option('by', { type: 'string', requiresArg: true, describe: 'lookup: email | url | domain, or a waterfall tried in order: email,url (default: from the header)' })
    .option('column', { type: 'string', requiresArg: true, describe: 'input column holding the key; once per kind of a waterfall; a position with --no-header (default: from the header)' })
    .option('delimiter', { alias: 'd', type: 'string', requiresArg: true, describe: "the input's field delimiter: one character, or tab (default: detected among , ; tab |)" })
    .option('tabs', { alias: 't', type: 'boolean', describe: 'the input is tab-separated (same as --delimiter tab)' })
    .option('encoding', { type: 'string', requiresArg: true, describe: "the input's encoding, any WHATWG label: utf-8, utf-16le, windows-1252, ... (default: detected)" })
    .option('sheet', { type: 'string', requiresArg: true, describe: 'the worksheet of an .xlsx input: its name or position, e.g. Leads or 2 (default: the first)' })
    .option('header', { type: 'boolean', describe: 'the first line is a header; --no-header: it is data (columns column_1, ...; --column N is a position)' })
    // Not an array option: `--with mx contacts.csv` would take the file name as a second value.
    // A comma list, or the option repeated.
    .option('with', { type: 'string', requiresArg: true, describe: "also look up the row's domain: mx, whois, and/or company (the company by domain; never a free mail domain): mx,company" })
    .option('prefix', { type: 'string', requiresArg: true, describe: 'put this before the name of every added column, e.g. to enrich an enriched file again' })
    .option('fields', { type: 'string', requiresArg: true, describe: 'keep only these added columns, in this order: lead_name,lead_title (lead_status is always kept); lead.MEMBER adds any member of the lead, e.g. lead.phones' })
    .option('fill', { type: 'string', requiresArg: true, describe: "fill blank cells of the input's own columns from the answer: Title=lead_title,Company=lead_company_name (adds only lead_status)" })
    .option('overwrite', { type: 'boolean', describe: 'with --fill: replace cells that hold a value too' })
    .option('only-missing', { type: 'string', requiresArg: true, describe: 'look up only rows where one of these columns is blank: Title,Company (the others: skipped, complete)' })
    .option('report', { type: 'string', requiresArg: true, describe: 'write a run report at the end: FILE.html (charts, one self-contained page) or FILE.json' })
    .option('skip-lines', { type: 'number', requiresArg: true, describe: "the first N lines are not the table: a report's title lines above the header (default: one-cell lines above it are detected)" })
    .option('limit', { type: 'number', requiresArg: true, describe: 'only the first N data rows, to try a file before the whole run (the output is partial, and says so)' })
    .option('yes', { alias: 'y', type: 'boolean', describe: 'do not ask before a run that may spend more than confirmAbove credits (config; default 1000); nothing is asked without a terminal' })
    .option('rpm', { type: 'number', requiresArg: true, describe: 'requests per minute (default: from /account/limits)' })
    .option('concurrency', { type: 'number', requiresArg: true, describe: 'most requests in flight (default: sized from rate and latency)' })
    .option('min-credits', { type: 'number', requiresArg: true, describe: "credit reserve never spent (default: the account's low-balance threshold)" })
    .option('budget', { type: 'number', requiresArg: true, describe: 'spend at most N credits in this run (all operations); exit 3 when it binds' })
    .option('retries', { type: 'number', requiresArg: true, describe: 'retries of a transient failure (default 4)' })
    .option('dry-run', { type: 'boolean', describe: 'plan only: keys, known answers, credits and time needed; no lookup' })
    .option('json', { type: 'boolean', describe: 'print the summary (or the dry-run plan) as one JSON object on stdout' })
    .option('format', { type: 'string', requiresArg: true, describe: 'enriched output format: csv, jsonl or xlsx (default: from the output name, else xlsx for an .xlsx input, else csv)' })
    .option('store', { type: 'string', requiresArg: true, describe: 'result store path (env LEAD_ENRICH_STORE; default: per-user cache, results.sandbox.sqlite there with --sandbox)' })
    .option('max-age', { type: 'string', requiresArg: true, describe: 'reuse stored answers younger than this (default 30d)' })
    .option('refresh', { type: 'boolean', describe: 'ignore answers stored by earlier runs' })
    .option('quiet', { alias: 'q', type: 'boolean', describe: 'no progress and no summary on success (a run that does not exit 0 still prints its one-line summary)' })
    .option('max-errors', { type: 'string', requiresArg: true, describe: "stop looking up once more than N rows (or N% of the rows looked up, judged after 50) are errors of the API's; exit 4" })
    .option('patience', { type: 'string', requiresArg: true, describe: 'how long to wait for an API that is down before giving up on it (default 10m); then exit 2, the rest skipped' })
    .option('redis', { type: 'string', requiresArg: true, describe: 'share rate limit, credit reserve and answers with other workers (env LEAD_ENRICH_REDIS)' })
    .option('shard', { type: 'string', requiresArg: true, describe: 'process only shard K of N of the rows (stable hash of the key), e.g. 2/4' })
    .option('rate-window', { type: 'number', requiresArg: true, describe: "the server's rate window in ms (default 60000; for a sandbox run with --window-ms)" })
    .epilogue(
      examplesText([
        ['$0 enrich contacts.csv --sandbox', 'try it against the embedded sandbox'],
        ['$0 enrich contacts.csv -o out.csv --with mx', 'enrich by the detected column, add MX columns'],
        ['$0 enrich leads.csv --by url --column "Person Linkedin Url"', 'choose the lookup and column'],
        ['$0 enrich crm.csv --by email,url', 'waterfall: by email, and by profile URL where the email finds nothing'],
        ['$0 enrich export.csv -d ";" --encoding windows-1252', 'a German Excel export (both are detected too)'],
        ['$0 enrich leads.xlsx --sheet Leads', 'a workbook: the sheet Leads, out to leads.enriched.xlsx'],
        ['cat in.csv | $0 enrich - -o - --quiet > out.csv', 'stdin to stdout'],
        ['$0 enrich contacts.csv --dry-run', 'what would it cost? no lookup is made'],
        ['$0 enrich contacts.csv --limit 10', 'try the first 10 rows before the whole file'],
        ['$0 enrich report.csv --skip-lines 3', 'a report export whose header is on line 4'],
        ['$0 enrich big.csv --shard 1/4 --redis "$REDIS_URL"', 'worker 1 of 4, sharing the account through the Redis at $REDIS_URL (redis://host:6379)'],
        ['$0 enrich nightly.csv -q --max-errors 5%', 'in cron or CI: silent on success, fails loudly when the API is down'],
        ['$0 enrich crm.csv --fill "Title=lead_title,Company=lead_company_name"', "fill the CRM's own blank cells; rows already complete are not looked up"],
        ['$0 enrich crm.csv --report run.html', 'a report to open in a browser: match and fill rates, credits, the rate used'],
      ]),
    )
    .epilogue(EXIT_STATUSES);
}

/**
 * The command line as the library's options: each flag read by its one rule (options/option-table.ts,
 * named as typed), else the environment, else the config file (already read by the same rules).
 */
function optionsFrom(args: EnrichArgs, target: Target): EnrichOptions {
  const file = target.config.file;
  const flag = <K extends OptionName>(name: K, raw: unknown): OptionValue<K> | undefined => readOption(name, raw, 'flag') ?? (file[name] as OptionValue<K> | undefined);
  if (args.tabs && args.delimiter !== undefined && args.delimiter.toLowerCase() !== 'tab') {
    throw new ConfigError(`Invalid option --tabs: contradicts --delimiter '${args.delimiter}'; give one of them`);
  }
  const windowMs = flag('windowMs', asTyped('rate-window', args.rateWindow));
  const maxAgeMs = flag('maxAge', args.maxAge);
  return {
    input: args.input === STDIN_ARGUMENT ? '-' : args.input,
    delimiter: args.tabs ? '\t' : flag('delimiter', args.delimiter),
    encoding: flag('encoding', args.encoding),
    header: args.header ?? file.header,
    sheet: flag('sheet', args.sheet),
    output: args.output,
    errors: args.errors,
    by: flag('by', args.by),
    column: flag('column', args.column),
    with: flag('with', args.with),
    // Undefined unless given: `-o x.jsonl` then means JSON Lines.
    format: flag('format', args.format),
    prefix: flag('prefix', args.prefix),
    fields: flag('fields', args.fields),
    fill: flag('fill', args.fill),
    overwrite: args.overwrite ?? file.overwrite,
    onlyMissing: flag('onlyMissing', args.onlyMissing),
    report: flag('report', args.report),
    skipLines: flag('skipLines', asTyped('skip-lines', args.skipLines)),
    limit: flag('limit', asTyped('limit', args.limit)),
    commandLine: ['lead-enrich', ...process.argv.slice(2)],
    client: target.client,
    service: target.service,
    rpm: flag('rpm', asTyped('rpm', args.rpm)),
    concurrency: flag('concurrency', asTyped('concurrency', args.concurrency)),
    minCredits: flag('minCredits', asTyped('min-credits', args.minCredits)),
    budget: flag('budget', asTyped('budget', args.budget)),
    retries: flag('retries', asTyped('retries', args.retries)),
    store: target.storePath(args.store),
    ...(maxAgeMs === undefined ? {} : { maxAgeMs }),
    refresh: args.refresh ?? file.refresh ?? false,
    redis: flag('redis', args.redis ?? (process.env.LEAD_ENRICH_REDIS || undefined)),
    shard: flag('shard', args.shard),
    maxErrors: readOption('maxErrors', args.maxErrors, 'flag') === undefined ? file.maxErrors : args.maxErrors,
    patience: readOption('patience', args.patience, 'flag') === undefined ? patienceOf(file.patience) : args.patience,
    ...(windowMs === undefined ? {} : { tuning: { windowMs } }),
  };
}

/**
 * A password in --redis is on the command line, which every user of the machine can read (ps,
 * /proc/PID/cmdline) and the shell keeps in its history. Said once, without the password.
 */
function warnOfRedisPassword(flagValue: string | undefined, warn: (line: string) => void): void {
  if (flagValue === undefined || !URL.canParse(flagValue) || new URL(flagValue).password === '') return;
  warn('--redis holds a password, which other users of this machine can see in the process list; set the URL in LEAD_ENRICH_REDIS or the config file\'s "redis" instead');
}

/** The config file's patience (milliseconds, once read) as the duration the library reads. */
function patienceOf(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : `${ms}ms`;
}

/**
 * In a terminal, a run that may spend more than `confirmAbove` credits asks first (as the CRM
 * enrichment tools do); without a terminal (cron, CI, a pipe) nothing is asked and nothing changes.
 */
async function confirmed(io: CliIo, options: EnrichOptions, above: number): Promise<boolean> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return true;
  const { spendEstimate } = await import('../run/spend-estimate.js');
  const estimate = await spendEstimate(options, above, options.service ?? '');
  if (estimate === undefined || estimate.credits <= above) return true;
  const lookups = `${estimate.more ? 'at least ' : ''}${estimate.lookups} lookups not stored yet`;
  const answer = await askOnTerminal(`This run may spend more than ${above} credits (${lookups}, up to ${PUBLISHED_FOUND_COST} credits each). Start it? [y/N] `);
  if (answer !== undefined && saidYes(answer)) return true;
  io.err(`lead-enrich: not started: nothing was looked up (--yes skips this question; confirmAbove in the config file sets its threshold, now ${above})`);
  io.setStatus(1);
  return false;
}

async function dryRun(io: CliIo, options: EnrichOptions, json: boolean): Promise<void> {
  const { planRun } = await import('../run/dry-run.js');
  const plan = await planRun({ ...options, onWarning: (line) => stderrLines(io)(`lead-enrich: ${line}`) });
  // The plan is what was asked for: stdout, so that `--dry-run > plan.txt` keeps it; the lines
  // about the run (warnings) stay on stderr.
  if (json) printJson(io, plan);
  else io.out(`${formatPlan(plan)}\n`);
  io.setStatus(plan.fits && plan.budget?.covers !== false ? 0 : 3);
}

async function run(io: CliIo, options: EnrichOptions, args: EnrichArgs): Promise<void> {
  const [{ enrich }, { progressView }, { formatSummary, oneLineSummary, paintFor }, { tuneHeapForEnrich }] = await Promise.all([
    import('../run/enrich.js'),
    import('./progress.js'),
    import('./summary-text.js'),
    import('./heap-tuning.js'),
  ]);
  tuneHeapForEnrich(options.input);
  const view = progressView(stderrLines(io), args.quiet ? { kind: 'quiet' } : io.isTty ? { kind: 'terminal', stream: process.stderr } : { kind: 'plain' });
  // Every line goes through the view: on a terminal it is written above the progress line.
  const say = (line: string) => view.print(line);
  const signals = interruptOnSignals(say, args.quiet ?? false);
  let summary: EnrichSummary;
  try {
    summary = await enrich({
      ...options,
      signal: signals.interrupt,
      quit: signals.quit,
      onProgress: (p) => view.update(p),
      onWarning: (line) => say(`lead-enrich: ${line}`),
      // Quiet is for runs that end well: an outage the run outlived is no news; one it gave up on
      // is in the one-line summary.
      onAvailability: (line) => (args.quiet ? undefined : say(`lead-enrich: ${line}`)),
      onNotice: (line) => (args.quiet ? undefined : say(`lead-enrich: ${line}`)),
      tuning: { progressIntervalMs: io.isTty ? 200 : 1000, ...options.tuning },
    });
  } finally {
    view.stop();
  }
  const status = exitStatusOf(summary);
  // The JSON summary goes to stdout when the output is a file (docs/cli-contract.md); when the rows
  // themselves go to stdout it would corrupt them, so it goes to stderr instead, one JSON line
  // (not stamped: it is for machines).
  const rowsOnStdout = (options.output ?? (options.input === '-' ? '-' : undefined)) === '-';
  if (args.json && rowsOnStdout) io.err(JSON.stringify(summary));
  else if (args.json) printJson(io, summary);
  // Quiet is for success: a failing run that printed nothing would hide itself from cron mail.
  if (args.quiet && status !== 0 && !(args.json && rowsOnStdout)) say(`lead-enrich: ${oneLineSummary(summary)}`);
  else if (!args.quiet && !(args.json && rowsOnStdout)) say(formatSummary(summary, paintFor(process.stderr)));
  io.setStatus(status);
}

/**
 * SIGINT/SIGTERM: the first stops the run (requests in flight may finish, the rest of the rows are
 * written as skipped); a second quits at once (rows in flight are written as skipped too).
 * Kept until the process exits: a signal after the run must not kill the process before the
 * store is closed and the summary is out.
 */
function interruptOnSignals(say: (line: string) => void, quiet: boolean): { interrupt: AbortSignal; quit: AbortSignal } {
  const interrupt = new AbortController();
  const quit = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupt.signal.aborted) {
      if (quit.signal.aborted) return;
      if (!quiet) say(`lead-enrich: ${signal} again: quitting now; the rows in flight are written as skipped.`);
      quit.abort();
      return;
    }
    if (!quiet) say(`lead-enrich: ${signal}: stopping; requests in flight may finish, the remaining rows are written as skipped (Ctrl-C again to quit at once).`);
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { interrupt: interrupt.signal, quit: quit.signal };
}

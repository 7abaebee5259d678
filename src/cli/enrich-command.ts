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
import { configFilesOf, withConfigFiles, withDoors, type Doors } from '../options/option-table.js';
import { givenValue, readGiven } from '../options/precedence.js';
import { refuseRowsInto } from './stdout-file.js';
import { isStandardOutput } from '../write/output-place.js';
import type { Door } from '../options/refusal.js';
import { FLAG_NAMES, LIBRARY_NAMES, argName, defaultOf, row as rowOf, type FlagArgs, type OptionName } from '../options/registry.js';
import { flagOptions } from './flag-options.js';
import { examplesText } from './help-examples.js';
import { writeOutcome, type CliIo } from './io.js';
import { tellFatal } from './fatal.js';
import { openTarget, TARGET_FLAGS, targetOptions, type Target } from './target.js';
import { STDIN_ARGUMENT } from './stdin-argument.js';
import { asTyped } from './number-flags.js';
import { noticeLines, noticeText, stderrLines } from './stderr-lines.js';
import { terminalText } from '../core/terminal-text.js';
import { exitStatusesHelp } from '../core/exit-statuses.js';
import { STOPS } from '../lookup/stops.js';
import { exitStatusOf } from '../run/exit-status.js';
import { PUBLISHED_FOUND_COST } from '../lookup/credits.js';
import { askOnTerminal, saidYes } from './ask-user.js';
import { openCiStep } from './ci/ci-choice.js';
import type { CiStep } from './ci/ci-step.js';

type EnrichArgs = FlagArgs & { input: string };

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
      ? [
          `Complete rows (their cells hold values: skipped, no request): ${plan.completeRows}, saving at most ${plan.lookupsSaved} lookups (${plan.creditsSaved} credits)`,
        ]
      : []),
    // A column's name on one line, whatever it holds (the text is escaped again as stdout, line feeds kept).
    `Lookup: ${plan.lookup.order.map((t) => `${t.kind} from column "${terminalText(t.column)}"`).join(', then ')}${plan.lookup.with.length ? ` with ${plan.lookup.with.join(', ')}` : ''}`,
    `Distinct keys: ${per(plan.distinctKeys)}`,
    `Already known (free): ${per(plan.alreadyKnown)}`,
    `Lookups to make: ${plan.lookupsToMake === plan.lookupsExpected ? plan.lookupsToMake : `at most ${plan.lookupsToMake}, expected ${plan.lookupsExpected} (a waterfall stops at the first found)`}`,
    `Credits needed: at most ${plan.creditsNeeded} (${plan.creditsEstimate})`,
    `Time needed: ${timeNeeded(plan)}`,
    plan.accountRead
      ? `Balance: ${plan.balance}, reserve ${plan.reserve}: ${plan.fits ? 'it fits' : 'it does NOT fit; the run would stop at the reserve (exit 3)'}`
      : 'Balance: not read (no lookup to make, so the API was not asked)',
    ...plan.budgets.map(budgetLine),
    ...(plan.warning ? [`Warning: ${plan.warning}`] : []),
  ].join('\n');
}

/** A budget in the plan: what its period spent so far and what is left, and whether the plan fits. */
function budgetLine(b: DryRunPlan['budgets'][number]): string {
  const verdict = b.fits
    ? 'it covers the credits needed'
    : `it does NOT cover the credits needed; the run would stop at --budget${b.per === 'run' ? '' : ` ${b.budget}`} (exit 3)`;
  if (b.per === 'run') return `Budget: ${b.credits} credits: ${verdict}`;
  return `Budget ${b.budget}: ${b.spent} credits spent ${b.per === 'day' ? 'today' : 'this month'} (${b.period}, UTC), ${b.left} left: ${verdict}`;
}

export function enrichCommand(io: CliIo): CommandModule<object, EnrichArgs> {
  return {
    command: 'enrich <input>',
    describe: 'Enrich a CSV or .xlsx file (or - for stdin): enriched CSV (or .xlsx) + error sidecar',
    builder: (yargs) => enrichOptions(targetOptions(yargs)) as never,
    handler: async (args) => {
      const target = await openTarget(args, noticeLines(io)).catch(async (error: unknown) => {
        // A config file that cannot be read: the flags and the environment say which CI is told of it.
        await openCiStep(io, args, undefined, noticeLines(io)).catch(() => undefined);
        throw error;
      });
      warnOfRedisPassword(args.redis, noticeLines(io));
      try {
        const ci = await openCiStep(io, args, target.config, noticeLines(io));
        const options = optionsFrom(args, target);
        // The JSON of every outcome, a failure's too, goes where the summary's goes.
        if (args.json)
          io.json = rowsOnStdout(options) || [options.output, options.errors, options.changes, options.report].some(isStandardOutput) ? 'err' : 'out';
        if (args.dryRun) await dryRun(io, options, args.json ?? false);
        else if (args.yes || (await confirmed(io, options, confirmAboveOf(target)))) await run(io, options, args, ci);
      } finally {
        await target.close();
      }
    },
  };
}

/** The flags of enrich beyond the target's (target.ts), in the registry's order. */
const ENRICH_FLAGS = FLAG_NAMES.filter((name) => !TARGET_FLAGS.includes(name));

function enrichOptions<T>(yargs: import('yargs').Argv<T>) {
  return flagOptions(yargs.positional('input', { type: 'string', describe: 'CSV or .xlsx file, or - for stdin (CSV)', demandOption: true }), ENRICH_FLAGS)
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
        ['$0 enrich nightly.csv -q --budget 500/day --budget 10000/month', 'at most 500 credits a UTC day and 10000 a month, all runs on the store together'],
        ['$0 enrich crm.csv --fill "Title=lead_title,Company=lead_company_name"', "fill the CRM's own blank cells; rows already complete are not looked up"],
        ['$0 enrich crm.csv --report run.html', 'a report to open in a browser: match and fill rates, credits, the rate used'],
      ]),
    )
    .epilogue(exitStatusesHelp());
}

/** The options the target's client settles (target.ts): the run is given the client, not them. */
const CLIENT_OWN: readonly OptionName[] = ['baseUrl', 'timeoutMs', 'token', 'proxy', 'store'];
/** The run options the command line collects: the library's, and the rate window (the library's tuning.windowMs). */
const COLLECTED = [...LIBRARY_NAMES.filter((name) => !CLIENT_OWN.includes(name)), 'windowMs'] as const;

/**
 * The command line as the library's options: each value as typed (a flag), else its environment
 * variable, else the config file's, with the door it came in by; resolveOptions reads each once
 * by its rule, naming it as the user gave it.
 */
function optionsFrom(args: EnrichArgs, target: Target): EnrichOptions {
  if (args.tabs && args.delimiter !== undefined && args.delimiter.toLowerCase() !== 'tab') {
    throw new ConfigError(`Invalid option --tabs: contradicts --delimiter '${args.delimiter}'; give one of them`);
  }
  const values: Record<string, unknown> = {};
  const doors: Doors = {};
  for (const name of COLLECTED) {
    const given = name === 'delimiter' && args.tabs ? (['tab', 'flag'] as const) : collected(name, args, target);
    if (given === undefined) continue;
    [values[name], doors[name]] = given;
  }
  // The store's path is the target's to choose (a sandbox's store is its own); a flag is named as one.
  if (args.store !== undefined) doors.store = 'flag';
  const { windowMs, ...run } = values;
  const options = {
    ...run,
    input: args.input === STDIN_ARGUMENT ? '-' : args.input,
    commandLine: ['lead-enrich', ...process.argv.slice(2)],
    client: target.client,
    service: target.service,
    store: target.storePath(args.store),
    ...(windowMs === undefined ? {} : { tuning: { windowMs } }),
  };
  // Values as typed: EnrichOptions' types are what they are read into.
  return withConfigFiles(withDoors(options as EnrichOptions, doors), target.config.files);
}

/** The value of option `name` as the command line has it, and its door (options/precedence.ts). */
function collected(name: OptionName, args: EnrichArgs, target: Target): readonly [unknown, Door] | undefined {
  const row = rowOf(name);
  const typed = row.flag === undefined ? undefined : asTyped(row.flag, (args as Record<string, unknown>)[argName(row.flag)]);
  return givenValue(name, { flag: typed, file: target.config.file, fileDoor: target.config.fileDoor });
}

/** Above this many credits, a run in a terminal asks first. */
function confirmAboveOf(target: Target): number {
  return readGiven('confirmAbove', { file: target.config.file, fileDoor: target.config.fileDoor }) ?? defaultOf('confirmAbove')!;
}

/**
 * A password in --redis is on the command line, which every user of the machine can read (ps,
 * /proc/PID/cmdline) and the shell keeps in its history. Said once, without the password.
 */
function warnOfRedisPassword(flagValue: string | undefined, warn: (line: string) => void): void {
  if (flagValue === undefined || !URL.canParse(flagValue) || new URL(flagValue).password === '') return;
  warn(
    '--redis holds a password, which other users of this machine can see in the process list; set the URL in LEAD_ENRICH_REDIS or the config file\'s "redis" instead',
  );
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
  const answer = await askOnTerminal(
    `This run may spend more than ${above} credits (${lookups}, up to ${PUBLISHED_FOUND_COST} credits each). Start it? [y/N] `,
  );
  if (answer !== undefined && saidYes(answer)) return true;
  const message = `not started: nothing was looked up (--yes skips this question; confirmAbove in the config file sets its threshold, now ${above})`;
  await tellFatal(io, { status: 1, code: 'not_confirmed', message, line: message });
  io.setStatus(1);
  return false;
}

async function dryRun(io: CliIo, options: EnrichOptions, json: boolean): Promise<void> {
  const { planRun } = await import('../run/dry-run.js');
  const plan = await planRun({ ...options, onWarning: noticeLines(io) });
  // The plan is what was asked for: stdout, so that `--dry-run > plan.txt` keeps it; the lines
  // about the run (warnings) stay on stderr.
  // What the run would exit with: stopped at the reserve or at the budget that does not cover it.
  const status = !plan.fits ? STOPS.credits.exit : plan.budgets.every((b) => b.fits) ? 0 : STOPS.budget.exit;
  if (json) writeOutcome(io, status, plan);
  else io.out(`${formatPlan(plan)}\n`);
  io.setStatus(status);
}

/** The rows themselves go to stdout: the JSON (summary, plan, failure) then goes to stderr, one line. */
function rowsOnStdout(options: EnrichOptions): boolean {
  return (options.output ?? (options.input === '-' ? '-' : undefined)) === '-';
}

async function run(io: CliIo, options: EnrichOptions, args: EnrichArgs, ci: CiStep | undefined): Promise<void> {
  const [{ enrich }, { progressView }, { formatSummary, oneLineSummary, paintFor }, { tuneHeapForEnrich }] = await Promise.all([
    import('../run/enrich.js'),
    import('./progress.js'),
    import('./summary-text.js'),
    import('./heap-tuning.js'),
  ]);
  tuneHeapForEnrich(options.input);
  if (rowsOnStdout(options)) refuseRowsInto(filesOf(options));
  else if (options.changes === '-') refuseRowsInto(filesOf(options), 'the changes');
  const view = progressView(stderrLines(io), args.quiet ? { kind: 'quiet' } : io.isTty ? { kind: 'terminal', stream: process.stderr } : { kind: 'plain' });
  // Every line goes through the view: on a terminal it is written above the progress line.
  const say = (line: string) => view.print(line);
  const signals = interruptOnSignals(say, args.quiet ?? false);
  let summary: EnrichSummary;
  ci?.progressStarts();
  try {
    summary = await enrich({
      ...options,
      signal: signals.interrupt,
      quit: signals.quit,
      onProgress: (p) => view.update(p),
      onWarning: (line) => say(noticeText(line)),
      // Quiet is for runs that end well: an outage the run outlived is no news; one it gave up on,
      // and a stop of the account's (the reserve, --budget), is in the one-line summary.
      onAvailability: (line) => (args.quiet ? undefined : say(noticeText(line))),
      onNotice: (line) => (args.quiet ? undefined : say(noticeText(line))),
      tuning: { progressIntervalMs: io.isTty ? 200 : 1000, ...options.tuning },
    });
  } finally {
    view.stop();
    ci?.progressEnds();
  }
  const status = exitStatusOf(summary);
  // The JSON summary goes to stdout when the output is a file (docs/cli-contract.md); when the rows
  // themselves go to stdout it would corrupt them, so it goes to stderr instead, one JSON line
  // (not stamped: it is for machines). It says the exit status and the version, as every outcome's JSON.
  const jsonOnStderr = io.json === 'err';
  if (args.json) writeOutcome(io, status, summary);
  // Quiet is for success: a failing run that printed nothing would hide itself from cron mail.
  if (args.quiet && status !== 0 && !jsonOnStderr) say(noticeText(oneLineSummary(summary)));
  else if (!args.quiet && !jsonOnStderr) say(formatSummary(summary, paintFor(process.stderr)));
  await ci?.finished(summary, options);
  io.setStatus(status);
}

/** The files a run reads or keeps, by the names its messages give them. */
function filesOf(options: EnrichOptions): Array<{ option: string; path: string }> {
  const input = typeof options.input === 'string' && options.input !== '-' ? [{ option: 'the input', path: options.input }] : [];
  const store = typeof options.store === 'string' ? [{ option: 'the store', path: options.store }] : [];
  return [...input, ...store, ...configFilesOf(options)];
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
    if (!quiet)
      say(`lead-enrich: ${signal}: stopping; requests in flight may finish, the remaining rows are written as skipped (Ctrl-C again to quit at once).`);
    interrupt.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { interrupt: interrupt.signal, quit: quit.signal };
}

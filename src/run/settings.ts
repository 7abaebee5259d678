// One resolver for the options of a run: the library's `enrich()`, its dry run and the command
// line all come through here. Every value is read once, by its option's rule, and named in a
// message as it came in (registry.ts, option-table.ts); every default comes from the registry or
// defaults.ts. What leaves is the settings object the run's phases read.
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { LeadClient } from '../lookup/lead-client.js';
import type { Shard } from '../plan/plan.js';
import { ConfigError } from '../api/errors.js';
import type { TransportOptions } from '../api/transport.js';
import { defaultStorePath } from '../store/default-path.js';
import { isWorkbookFile, type SourceOptions } from '../read/index.js';
import { ResultStore } from '../store/result-store.js';
import { refuseSharedFiles } from './output-files.js';
import type { BudgetLimit } from '../core/budget-periods.js';
import { DEFAULTS } from '../options/defaults.js';
import type { EnrichOptions, EnrichProgress, EnrichTuning, Extra } from './enrich-options.js';
import { didYouMean } from '../options/did-you-mean.js';
import { doorOf, optionWord, readOption } from '../options/option-table.js';
import { checked, invalid, type Door } from '../options/refusal.js';
import { defaultOf, LIBRARY_NAMES, LIBRARY_RULED, type LibraryName, type OptionSettings } from '../options/registry.js';
import { nonNegativeInteger, positiveInteger } from '../options/rules.js';

/**
 * The settings of a run: one per option of enrich() that has a rule, under the option's name and
 * as its rule reads it (registry.ts: OptionSettings), then the ones worked out from more than
 * their own value (the files and their formats) and those only a program can give.
 */
export type EnrichSettings = Omit<OptionSettings, 'format' | 'store' | 'budget' | 'with' | 'maxAgeMs'> & {
  input: string | Readable;
  output: string | Writable;
  errors: string | Writable | undefined;
  format: OutputFormat;
  /** Tab when the output (or, written to stdout, the sidecar) is named `.tsv`/`.tab`; else the input's. */
  outputDelimiter: string | undefined;
  store: string | ResultStore;
  /** --budget: this run's, a UTC day's, a UTC month's (empty: none). */
  budget: BudgetLimit[];
  with: Extra[];
  /** The command line the report names (secrets masked there). */
  commandLine: readonly string[];
  client: LeadClient | undefined;
  service: string | undefined;
  signal: AbortSignal | undefined;
  quit: AbortSignal | undefined;
  onProgress: ((progress: EnrichProgress) => void) | undefined;
  warn: (line: string) => void;
  /**
   * Where the lines about the API's availability go, and the line said when the account stops the
   * run (the reserve, a 402, --budget) or Redis is lost: onAvailability (default: warn); the CLI's
   * -q says them in its one line.
   */
  tellAvailability: (line: string) => void;
  /** Where the lines about what was left out go (title lines, footer, --limit, nothing to look up; default: warn). */
  notice: (line: string) => void;
  stdout: Writable | undefined;
  tuning: Required<Omit<EnrichTuning, 'storeFlushIntervalMs'>> & Pick<EnrichTuning, 'storeFlushIntervalMs'>;
};

/** The options of enrich(): the registry's, and those only a program can give. */
const KNOWN_OPTIONS: ReadonlySet<string> = new Set([
  ...LIBRARY_NAMES,
  'input',
  'commandLine',
  'client',
  'service',
  'signal',
  'quit',
  'onProgress',
  'onWarning',
  'onAvailability',
  'onNotice',
  'stdout',
  'tuning',
]);
const TUNING_KEYS = [
  'windowMs',
  'progressIntervalMs',
  'retryBaseDelayMs',
  'retryMaxDelayMs',
  'creditsRefreshMs',
  'drainTimeoutMs',
  'edgeMarginMs',
  'reorderWindow',
  'storeFlushIntervalMs',
  'now',
] as const;

/** The options of enrich() (the registry's, and those only a program can give). */
export function enrichOptionNames(): string[] {
  return [...KNOWN_OPTIONS];
}

export function resolveOptions(options: EnrichOptions): EnrichSettings {
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object such as { input: "contacts.csv" }', options);
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key) && (options as unknown as Record<string, unknown>)[key] !== undefined) throw unknownOption(key, 'enrich', 'EnrichOptions');
  }
  const input = inputOf(options.input);
  const values = optionSettings(options);
  const format = formatOf(values.format, options.output, input);
  const output = outputOf(options.output, input, format, values.shard);
  const errors = errorsOf(options.errors, output, input);
  const store = options.store instanceof ResultStore ? options.store : (readOption('store', options.store, doorOf(options, 'store')) ?? defaultStorePath());
  // The report's path is tried (and its folder made) in prepare, before the first lookup.
  refuseSharedFiles(options, { input, output, errors, store: typeof store === 'string' ? store : store.path, report: values.report, changes: values.changes });
  if (values.overwrite && !values.fill)
    throw new ConfigError(`Invalid option ${optionWord('overwrite')}: it replaces the cells ${optionWord('fill')} fills; give ${optionWord('fill')} too`);
  const { maxAgeMs: _older, ...settings } = values;
  return {
    ...settings,
    input,
    output,
    errors,
    format,
    outputDelimiter: tabNamed(output) || (output === '-' && tabNamed(errors)) ? '\t' : undefined,
    store,
    budget: values.budget ?? [],
    with: values.with ?? [],
    // With --fill the output keeps the input's own shape: lead_status only, unless --fields asks for more.
    fields: values.fields ?? (values.fill ? [] : undefined),
    commandLine: commandLineOf(options.commandLine),
    client: options.client,
    service: options.service,
    signal: options.signal,
    quit: options.quit,
    onProgress: options.onProgress,
    warn: options.onWarning ?? (() => {}),
    tellAvailability: options.onAvailability ?? options.onWarning ?? (() => {}),
    notice: options.onNotice ?? options.onWarning ?? (() => {}),
    stdout: options.stdout,
    tuning: tuningOf(options.tuning ?? {}, doorOf(options, 'windowMs')),
  };
}

/**
 * Every option of enrich() that has a rule, read once by its rule and named as it came in (a flag,
 * the config file, the library), else its default. The store is read apart: it may be a ResultStore.
 */
function optionSettings(options: EnrichOptions): OptionSettings {
  const given = options as unknown as Record<string, unknown>;
  const values: Partial<Record<LibraryName, unknown>> = {};
  for (const name of LIBRARY_RULED) if (name !== 'store') values[name] = readOption(name, given[name], doorOf(options, name));
  // `maxAge` wins over its older spelling in milliseconds.
  values.maxAge ??= values.maxAgeMs;
  for (const name of LIBRARY_RULED) values[name] ??= defaultOf(name);
  return values as OptionSettings;
}

/**
 * An option no one of `what` has: named with the closest one, as the command line's flags and the
 * config file's keys are (`rmp` → did you mean rpm?).
 */
export function unknownOption(key: string, what: string, type: string, known: readonly string[] = [...KNOWN_OPTIONS]): ConfigError {
  const guess = didYouMean(key, known);
  return new ConfigError(`Invalid option ${key}: not an option of ${what} (see ${type})${guess ? `; did you mean ${guess}?` : ''}`);
}

/** The command line a report names: the caller's, else this process's own. */
function commandLineOf(given: unknown): readonly string[] {
  if (given === undefined) return process.argv.slice(1);
  if (Array.isArray(given) && given.every((arg) => typeof arg === 'string')) return given as string[];
  throw invalid('commandLine', 'must be an array of strings, such as process.argv.slice(1)', given);
}

function inputOf(input: unknown): string | Readable {
  if (typeof input === 'string' && input.length > 0) return input;
  const stream = input as Readable | undefined;
  if (stream && typeof stream.pipe === 'function' && typeof stream.on === 'function') return stream;
  throw invalid('input', "must be a CSV path, '-' for stdin, or a readable stream", input);
}

/** The output as given, or its default; a stream input has no name to make one from. */
function outputOf(output: unknown, input: string | Readable, format: OutputFormat, shard: Shard | undefined): string | Writable {
  if (output === undefined) {
    // Never process.stdout unless told '-' (docs/cli-contract.md, "Library"): stdin's rows go to stdout only on the command line.
    if (typeof input !== 'string') throw invalid('output', "must be given for a stream input: a path, a Writable, or '-' for stdout", output);
    return defaultOutput(input, format, shard);
  }
  if (typeof output === 'string' && output.length > 0) return output;
  if (isWritable(output)) return output;
  throw invalid('output', "must be a path, '-' for stdout, or a Writable", output);
}

function errorsOf(errors: unknown, output: string | Writable, input: string | Readable): string | Writable | undefined {
  if (errors === undefined) return typeof output === 'string' ? defaultErrors(output, input) : undefined;
  if ((typeof errors === 'string' && errors.length > 0) || isWritable(errors)) return errors as string | Writable;
  throw invalid('errors', 'must be a path or a Writable', errors);
}

function isWritable(value: unknown): value is Writable {
  const stream = value as Writable | undefined;
  return typeof stream === 'object' && stream !== null && typeof stream.write === 'function' && typeof stream.end === 'function';
}

export type OutputFormat = 'csv' | 'jsonl' | 'xlsx';

/** The format an output's name says (`x.jsonl`, `x.xlsx`, `x.csv.gz`), if any. */
function formatNamed(output: unknown): OutputFormat | undefined {
  if (typeof output !== 'string') return undefined;
  if (/\.xlsx(\.gz)?$/i.test(output)) {
    if (/\.gz$/i.test(output)) throw new ConfigError(`Invalid option ${optionWord('output')}: an .xlsx is compressed already, got '${output}': drop the .gz`);
    return 'xlsx';
  }
  if (/\.jsonl(\.gz)?$/i.test(output)) return 'jsonl';
  return /\.(csv|tsv|tab)(\.gz)?$/i.test(output) ? 'csv' : undefined;
}

/**
 * `--format`, or what the output's name says (`-o x.jsonl` means JSON Lines, `-o x.xlsx` a
 * workbook), the two agreeing; else a workbook for an .xlsx input written beside it, CSV otherwise
 * (an .xlsx input sent to stdout is CSV: docs/cli-contract.md, "Spreadsheets").
 */
function formatOf(given: OutputFormat | undefined, output: unknown, input: string | Readable): OutputFormat {
  const named = formatNamed(output);
  if (given !== undefined && named !== undefined && given !== named) {
    throw new ConfigError(
      `Invalid option ${optionWord('format')}: ${given} contradicts the output's name ${String(output)} (${NAMES[named]}): drop one of them`,
    );
  }
  if (given ?? named) return (given ?? named)!;
  return output === undefined && typeof input === 'string' && input !== '-' && isWorkbookFile(input) ? 'xlsx' : DEFAULTS.format;
}

const NAMES: Record<OutputFormat, string> = { csv: 'CSV', jsonl: 'JSON Lines', xlsx: 'an Excel workbook' };

/** A tuning knob, by its rule (the library's only). */
function checkedOrUndefined<T>(name: string, raw: unknown, rule: (raw: unknown) => T): T | undefined {
  return raw === undefined ? undefined : checked(raw, 'library', name, name, rule);
}

/** The knobs; the rate window may come from the command line (`windowDoor`), where it is a flag of its own. */
function tuningOf(tuning: EnrichTuning, windowDoor: Door): EnrichSettings['tuning'] {
  for (const key of Object.keys(tuning)) {
    if (!(TUNING_KEYS as readonly string[]).includes(key)) throw new ConfigError(`Invalid option tuning.${key}: not a tuning knob (${TUNING_KEYS.join(', ')})`);
  }
  const value = (key: (typeof TUNING_KEYS)[number]): number | undefined => checkedOrUndefined(`tuning.${key}`, tuning[key], nonNegativeInteger);
  return {
    windowMs:
      (windowDoor === 'library'
        ? checkedOrUndefined('tuning.windowMs', tuning.windowMs, positiveInteger)
        : readOption('windowMs', tuning.windowMs, windowDoor)) ?? defaultOf('windowMs')!,
    progressIntervalMs: checkedOrUndefined('tuning.progressIntervalMs', tuning.progressIntervalMs, positiveInteger) ?? DEFAULTS.progressIntervalMs,
    retryBaseDelayMs: value('retryBaseDelayMs') ?? DEFAULTS.retryBaseDelayMs,
    retryMaxDelayMs: value('retryMaxDelayMs') ?? DEFAULTS.retryMaxDelayMs,
    creditsRefreshMs: value('creditsRefreshMs') ?? DEFAULTS.creditsRefreshMs,
    drainTimeoutMs: value('drainTimeoutMs') ?? DEFAULTS.drainTimeoutMs,
    edgeMarginMs: value('edgeMarginMs') ?? DEFAULTS.edgeMarginMs,
    reorderWindow: checkedOrUndefined('tuning.reorderWindow', tuning.reorderWindow, positiveInteger) ?? DEFAULTS.reorderWindow,
    storeFlushIntervalMs: value('storeFlushIntervalMs'),
    now: clockOf(tuning.now),
  };
}

/** The clock the day and month budgets are read by (tests move it across a midnight). */
function clockOf(now: unknown): () => number {
  if (now === undefined) return Date.now;
  if (typeof now === 'function') return now as () => number;
  throw invalid('tuning.now', 'must be a function returning epoch milliseconds, such as () => Date.now()', now);
}

/** A path's stem and its extension, a `.gz` kept apart: `a/in.csv.gz` → `a/in`, `.csv`, `.gz`. */
function splitName(file: string): { stem: string; ext: string; gz: string } {
  const gz = /\.gz$/i.test(file) ? file.slice(-3) : '';
  const rest = gz ? file.slice(0, -3) : file;
  const ext = path.extname(rest);
  return { stem: ext ? rest.slice(0, -ext.length) : rest, ext, gz };
}

/** `<input>.enriched.csv` (or .jsonl, .xlsx) beside the input (stdin: stdout); gzipped when the input is. Shards get their own name. */
export function defaultOutput(input: string | Readable, format: OutputFormat, shard: Shard | undefined): string {
  if (typeof input !== 'string' || input === '-') return '-';
  const { stem, gz } = splitName(input);
  // Workers on shards of one input in one folder must not write over each other's outputs.
  const part = shard ? `.${shard.index}-of-${shard.count}` : '';
  return `${stem}.enriched${part}.${format}${format === 'xlsx' ? '' : gz}`;
}

/** A name that says tab-separated text: `.tsv` or `.tab` (gzipped or not). */
function tabNamed(file: unknown): boolean {
  return typeof file === 'string' && /\.(tsv|tab)(\.gz)?$/i.test(file);
}

/**
 * `<output name>.errors.csv` beside the output (or the input, when the output is stdout); gzipped
 * when that is; `.errors.tsv` (or `.tab`) when the output is tab-separated by its name, since the
 * sidecar is written like the output.
 */
export function defaultErrors(output: string, input: string | Readable): string | undefined {
  const base = output !== '-' ? output : typeof input === 'string' && input !== '-' ? input : undefined;
  if (base === undefined) return undefined;
  const { stem, ext, gz } = splitName(base);
  const named = output !== '-' && tabNamed(output) ? ext.toLowerCase() : '.csv';
  return `${stem}.errors${named}${gz}`;
}

/** The transport options of the client a run makes itself (when no `client` was given). */
export function transportOf(settings: EnrichSettings): TransportOptions {
  return {
    baseUrl: settings.baseUrl ?? '',
    token: settings.token ?? '',
    ...(settings.timeoutMs === undefined ? {} : { timeoutMs: settings.timeoutMs }),
    ...(settings.proxy === undefined ? {} : { proxy: settings.proxy }),
  };
}

/** How the input is read: the dialect and encoding given (CSV), the worksheet (.xlsx), the header. */
export function readOptionsOf(settings: EnrichSettings): SourceOptions {
  return {
    ...(settings.delimiter === undefined ? {} : { delimiter: settings.delimiter }),
    ...(settings.encoding === undefined ? {} : { encoding: settings.encoding }),
    ...(settings.sheet === undefined ? {} : { sheet: settings.sheet }),
    ...(settings.skipLines === undefined ? {} : { skipLines: settings.skipLines }),
    ...(settings.limit === undefined ? {} : { limit: settings.limit }),
    header: settings.header,
    warn: settings.notice,
  };
}

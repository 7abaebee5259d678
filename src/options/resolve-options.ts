// One resolver for the options of a run: the library's `enrich()`, its dry run and the command
// line all come through here. Every field is validated once (rules.ts) and every default comes
// from defaults.ts; what leaves is the settings object the run's phases read.
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { LeadClient } from '../api/client.js';
import { ConfigError } from '../api/errors.js';
import type { LookupKind, Shard } from '../plan/plan.js';
import { parseKinds } from '../plan/targets.js';
import { defaultStorePath } from '../store/default-path.js';
import { parseDuration } from '../store/duration.js';
import { assertDistinctFiles } from '../read/index.js';
import { ResultStore } from '../store/result-store.js';
import type { MaxErrors } from '../run/error-budget.js';
import { DEFAULTS } from './defaults.js';
import type { EnrichOptions, EnrichProgress, EnrichTuning, Extra } from './enrich-options.js';
import { delimiterOption, extrasList, invalid, maxErrorsOption, nonNegativeInteger, oneOf, positiveInteger, shardOption } from './rules.js';

export interface EnrichSettings {
  input: string | Readable;
  delimiter: string | undefined;
  encoding: string | undefined;
  header: boolean;
  output: string | Writable;
  errors: string | Writable | undefined;
  format: 'csv' | 'jsonl';
  /** The kinds to try, in order (a waterfall when more than one); undefined: detected. */
  by: LookupKind[] | undefined;
  /** The key column of each kind, in the same order; undefined: detected. */
  columns: string[] | undefined;
  extras: Extra[];
  prefix: string;
  fields: string[] | undefined;
  client: LeadClient | undefined;
  baseUrl: string;
  token: string;
  service: string | undefined;
  rpm: number | undefined;
  concurrency: number | undefined;
  minCredits: number | undefined;
  retries: number;
  maxErrors: MaxErrors | undefined;
  store: string | ResultStore;
  maxAgeMs: number;
  refresh: boolean;
  redis: string | undefined;
  shard: Shard | undefined;
  signal: AbortSignal | undefined;
  quit: AbortSignal | undefined;
  onProgress: ((progress: EnrichProgress) => void) | undefined;
  warn: (line: string) => void;
  stdout: Writable | undefined;
  tuning: Required<Omit<EnrichTuning, 'storeFlushIntervalMs'>> & Pick<EnrichTuning, 'storeFlushIntervalMs'>;
}

const KNOWN_OPTIONS: ReadonlySet<string> = new Set([
  'input', 'delimiter', 'encoding', 'header', 'output', 'errors', 'by', 'column', 'with', 'format', 'prefix', 'fields', 'client', 'baseUrl', 'token', 'service',
  'rpm', 'concurrency', 'minCredits', 'retries', 'maxErrors', 'store', 'maxAge', 'maxAgeMs', 'refresh', 'redis', 'shard',
  'signal', 'quit', 'onProgress', 'onWarning', 'stdout', 'tuning',
]);
const TUNING_KEYS = [
  'windowMs', 'progressIntervalMs', 'retryBaseDelayMs', 'retryMaxDelayMs', 'creditsRefreshMs',
  'drainTimeoutMs', 'edgeMarginMs', 'reorderWindow', 'storeFlushIntervalMs',
] as const;

export function resolveOptions(options: EnrichOptions): EnrichSettings {
  if (typeof options !== 'object' || options === null) throw invalid('options', 'must be an object such as { input: "contacts.csv" }', options);
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key) && (options as unknown as Record<string, unknown>)[key] !== undefined) {
      throw new ConfigError(`Invalid option ${key}: not an option of enrich (see EnrichOptions)`);
    }
  }
  const input = inputOf(options.input);
  const format = formatOf(options.format, options.output);
  const shard = shardOption('shard', options.shard);
  const output = outputOf(options.output, input, format, shard);
  const errors = errorsOf(options.errors, output, input);
  const store = options.store instanceof ResultStore ? options.store : (options.store ?? defaultStorePath());
  // Before anything is opened for writing or any request is made (cli-contract, "Never overwritten").
  assertDistinctFiles([
    { option: '<input>', path: typeof input === 'string' ? input : undefined },
    { option: '--output', path: typeof output === 'string' ? output : undefined },
    { option: '--errors', path: typeof errors === 'string' ? errors : undefined },
    { option: '--store', path: typeof store === 'string' ? store : store.path },
  ]);
  return {
    input,
    delimiter: delimiterOption('delimiter', options.delimiter),
    encoding: encodingOf(options.encoding),
    header: options.header ?? true,
    output,
    errors,
    format,
    by: parseKinds('by', options.by),
    columns: columnsOf(options.column),
    extras: extrasList('with', options.with) ?? [],
    prefix: prefixOf(options.prefix),
    fields: fieldsOf(options.fields),
    client: options.client,
    baseUrl: options.baseUrl ?? '',
    token: options.token ?? '',
    service: options.service,
    rpm: positiveInteger('rpm', options.rpm),
    concurrency: positiveInteger('concurrency', options.concurrency),
    minCredits: nonNegativeInteger('minCredits', options.minCredits),
    retries: nonNegativeInteger('retries', options.retries) ?? DEFAULTS.retries,
    maxErrors: maxErrorsOption('maxErrors', options.maxErrors),
    store,
    maxAgeMs: maxAgeOf(options),
    refresh: options.refresh ?? false,
    redis: options.redis,
    shard,
    signal: options.signal,
    quit: options.quit,
    onProgress: options.onProgress,
    warn: options.onWarning ?? (() => {}),
    stdout: options.stdout,
    tuning: tuningOf(options.tuning ?? {}),
  };
}

function inputOf(input: unknown): string | Readable {
  if (typeof input === 'string' && input.length > 0) return input;
  const stream = input as Readable | undefined;
  if (stream && typeof stream.pipe === 'function' && typeof stream.on === 'function') return stream;
  throw invalid('input', "must be a CSV path, '-' for stdin, or a readable stream", input);
}

function encodingOf(encoding: unknown): string | undefined {
  if (encoding === undefined) return undefined;
  // The label itself is checked where the input is read (read/encoding.ts knows every WHATWG label).
  if (typeof encoding !== 'string' || encoding.trim() === '') throw invalid('encoding', 'must be an encoding label such as utf-8, utf-16le or windows-1252', encoding);
  return encoding;
}

function columnsOf(column: unknown): string[] | undefined {
  if (column === undefined) return undefined;
  const list = Array.isArray(column) ? column : [column];
  if (list.length === 0 || list.some((name) => typeof name !== 'string')) throw invalid('column', 'must name a header column, or one per kind of by', column);
  return list as string[];
}

/** The output as given, or its default; a stream input has no name to make one from. */
function outputOf(output: unknown, input: string | Readable, format: 'csv' | 'jsonl', shard: Shard | undefined): string | Writable {
  if (output === undefined) {
    // Never process.stdout unless told '-' (cli-contract, "Library"): stdin's rows go to stdout only on the command line.
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

/** `--format`, or what the output's name says: `-o x.jsonl` means JSON Lines; the two must agree. */
function formatOf(format: unknown, output: unknown): 'csv' | 'jsonl' {
  const given = oneOf('format', format, ['csv', 'jsonl'] as const);
  const named = typeof output === 'string' && /\.jsonl(\.gz)?$/i.test(output) ? 'jsonl' : undefined;
  if (given === 'csv' && named === 'jsonl') {
    throw new ConfigError(`Invalid option --format: csv contradicts the output's name ${output} (JSON Lines): drop one of them`);
  }
  return given ?? named ?? DEFAULTS.format;
}

function prefixOf(prefix: unknown): string {
  if (prefix === undefined) return '';
  if (typeof prefix !== 'string' || /[\r\n]/.test(prefix)) throw invalid('prefix', 'must be text on one line, such as new_', prefix);
  return prefix;
}

function fieldsOf(fields: unknown): string[] | undefined {
  if (fields === undefined) return undefined;
  const list = (Array.isArray(fields) ? fields : [fields]).flatMap((item) => String(item).split(',')).map((name) => name.trim()).filter(Boolean);
  if (list.length === 0 || list.some((name) => typeof name !== 'string')) throw invalid('fields', 'must list added column names, such as lead_name,lead_title', fields);
  return [...new Set(list)];
}

function maxAgeOf(options: EnrichOptions): number {
  if (options.maxAge !== undefined) return parseDuration(options.maxAge, 'option maxAge');
  return nonNegativeInteger('maxAgeMs', options.maxAgeMs) ?? DEFAULTS.maxAgeMs;
}

function tuningOf(tuning: EnrichTuning): EnrichSettings['tuning'] {
  for (const key of Object.keys(tuning)) {
    if (!(TUNING_KEYS as readonly string[]).includes(key)) throw new ConfigError(`Invalid option tuning.${key}: not a tuning knob (${TUNING_KEYS.join(', ')})`);
  }
  const value = (key: (typeof TUNING_KEYS)[number]): number | undefined => nonNegativeInteger(`tuning.${key}`, tuning[key]);
  return {
    windowMs: positiveInteger('tuning.windowMs', tuning.windowMs) ?? DEFAULTS.windowMs,
    progressIntervalMs: positiveInteger('tuning.progressIntervalMs', tuning.progressIntervalMs) ?? DEFAULTS.progressIntervalMs,
    retryBaseDelayMs: value('retryBaseDelayMs') ?? DEFAULTS.retryBaseDelayMs,
    retryMaxDelayMs: value('retryMaxDelayMs') ?? DEFAULTS.retryMaxDelayMs,
    creditsRefreshMs: value('creditsRefreshMs') ?? DEFAULTS.creditsRefreshMs,
    drainTimeoutMs: value('drainTimeoutMs') ?? DEFAULTS.drainTimeoutMs,
    edgeMarginMs: value('edgeMarginMs') ?? DEFAULTS.edgeMarginMs,
    reorderWindow: positiveInteger('tuning.reorderWindow', tuning.reorderWindow) ?? DEFAULTS.reorderWindow,
    storeFlushIntervalMs: value('storeFlushIntervalMs'),
  };
}

/** A path's stem and its extension, a `.gz` kept apart: `a/in.csv.gz` → `a/in`, `.csv`, `.gz`. */
function splitName(file: string): { stem: string; ext: string; gz: string } {
  const gz = /\.gz$/i.test(file) ? file.slice(-3) : '';
  const rest = gz ? file.slice(0, -3) : file;
  const ext = path.extname(rest);
  return { stem: ext ? rest.slice(0, -ext.length) : rest, ext, gz };
}

/** `<input>.enriched.csv` beside the input (stdin: stdout); gzipped when the input is. Shards get their own name. */
export function defaultOutput(input: string | Readable, format: 'csv' | 'jsonl', shard: Shard | undefined): string {
  if (typeof input !== 'string' || input === '-') return '-';
  const { stem, gz } = splitName(input);
  // Workers on shards of one input in one folder must not write over each other's outputs.
  const part = shard ? `.${shard.index}-of-${shard.count}` : '';
  return `${stem}.enriched${part}.${format === 'jsonl' ? 'jsonl' : 'csv'}${gz}`;
}

/** `<output name>.errors.csv` beside the output (or the input, when the output is stdout); gzipped when that is. */
export function defaultErrors(output: string, input: string | Readable): string | undefined {
  const base = output !== '-' ? output : typeof input === 'string' && input !== '-' ? input : undefined;
  if (base === undefined) return undefined;
  const { stem, gz } = splitName(base);
  return `${stem}.errors.csv${gz}`;
}

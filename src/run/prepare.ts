// The first phase of a run: everything it needs before the first row is read — the input's
// header and key column, the store, the account (balance, rate), the Redis coordinator, the
// credit guard, the rate gate, the request path and the writer — and whether the run stops
// before it starts (credits). Each resource is registered for release as it is made.
import { randomUUID } from 'node:crypto';
import { LeadClient } from '../api/client.js';
import { ConfigError, RateLimitedError } from '../api/errors.js';
import { parseServiceLimits } from '../api/limits.js';
import type { Credits } from '../api/types.js';
import type { Coordinator } from '../cluster/coordinator.js';
import { CreditGuard, SharedCreditGuard, type CreditAccount } from '../lookup/credits.js';
import { Lookups } from '../lookup/lookups.js';
import { RateGate } from '../lookup/rate/rate-gate.js';
import { requestPath } from '../lookup/request-path/request-path.js';
import { RetryPolicy } from '../lookup/request-path/retry-policy.js';
import { withGate } from '../lookup/request-path/with-gate.js';
import { withRetry } from '../lookup/request-path/with-retry.js';
import { rateFor, type RatePlan } from '../options/rate-plan.js';
import type { EnrichSettings } from '../options/resolve-options.js';
import { BatchPlanner } from '../plan/batch-planner.js';
import { keyColumns } from '../plan/key-columns.js';
import type { LookupTarget } from '../plan/plan.js';
import { columnKind, domainColumnFor } from '../plan/targets.js';
import { fromBytes, openCsv, type CsvSource } from '../read/index.js';
import { ResultStore, type StoredForm } from '../store/result-store.js';
import { checkColumnChoice } from '../write/column-choice.js';
import { columnsFor, type ColumnSet } from '../write/columns.js';
import { RowWriter, type RowSink } from '../write/row-writer.js';
import { readAccount, type AccountReading } from './account.js';
import { CreditReadings } from './credit-readings.js';
import type { RunMetrics } from './metrics.js';
import type { Resources } from './resources.js';
import { RunStop } from './run-stop.js';

export interface PreparedRun {
  settings: EnrichSettings;
  client: LeadClient;
  source: CsvSource;
  /** The kinds to try and their columns: one, or a waterfall. */
  targets: LookupTarget[];
  domainColumn: LookupTarget | undefined;
  headerLine: boolean;
  columns: ColumnSet;
  credits: CreditAccount;
  reserve: number;
  rate: RatePlan;
  gate: RateGate;
  coordinator: Coordinator | undefined;
  stop: RunStop;
  readings: CreditReadings;
  lookups: Lookups;
  writer: RowSink;
}

export async function prepare(settings: EnrichSettings, metrics: RunMetrics, resources: Resources): Promise<PreparedRun> {
  // The input first: a wrong file, column or --fields is the first thing to fix, and costs no request.
  const input = await openInput(settings, resources);
  // A CSV of one lookup kind without --with writes only the answer's own columns: the store may hand
  // them over as cells (no JSON.parse). JSONL, a waterfall and --with need the parsed answers.
  const cellsOnly = settings.format === 'csv' && settings.extras.length === 0 && input.targets.length === 1;
  const lookups = await prepareLookups(settings, metrics, resources, cellsOnly ? 'cells' : 'data');
  const writer = openWriter(settings, input);
  resources.onFailure(() => writer.abort());
  return { settings, ...input, ...lookups, writer };
}

/** A balance reading is asked again only after a 429 (once: the gate holds it until the pause ends). */
const READING_RETRY = new RetryPolicy({ retries: 0, maxRateLimited: 1 });

export type PreparedLookups = Pick<PreparedRun, 'client' | 'credits' | 'reserve' | 'rate' | 'gate' | 'coordinator' | 'stop' | 'readings' | 'lookups'>;

/** Everything between a row's key and its answer: client, store, account, credit guard, gate, request path. */
export async function prepareLookups(settings: EnrichSettings, metrics: RunMetrics, resources: Resources, storedForm: StoredForm = 'data'): Promise<PreparedLookups> {
  const client = settings.client?.direct ?? new LeadClient({ baseUrl: settings.baseUrl, token: settings.token, retry: false });
  if (!settings.client) resources.defer(() => client.close());
  const store = openStore(settings, resources);
  const retry = new RetryPolicy({ retries: settings.retries, baseDelayMs: settings.tuning.retryBaseDelayMs, maxDelayMs: settings.tuning.retryMaxDelayMs });
  const account = await readAccount(client, retry, settings.tuning.windowMs, settings.rpm);
  const reserve = settings.minCredits ?? account.threshold;
  const coordinator = settings.redis ? await connectCoordinator(settings.redis, settings.service ?? client.baseUrl, client, resources) : undefined;
  const stop = new RunStop();
  const credits = await creditAccount(account, reserve, coordinator, stop, settings.warn);
  const rate = rateFor(settings.rpm, account.limits);
  if (rate.rpm < 1) throw new ConfigError(`The account allows no requests (rate limit ${account.limits.rpm} RPM): nothing can be looked up`);
  const gate = await openGate(settings, rate, account, client, coordinator, metrics);
  resources.defer(() => gate.stop());
  wireStops(settings, stop, gate, coordinator);
  const readCredits = withRetry(withGate<void>(() => client.getCredits(), gate, metrics, stop.signal), READING_RETRY, metrics, stop.requestsSignal);
  const readings = new CreditReadings(() => readCredits() as Promise<Credits>, credits, metrics);
  resources.defer(() => readings.stop());
  readings.startPeriodic(settings.tuning.creditsRefreshMs);
  const lookups = new Lookups({
    store,
    service: settings.service ?? client.baseUrl,
    runId: randomUUID(),
    maxAgeMs: settings.maxAgeMs,
    refresh: settings.refresh,
    send: requestPath({ client, gate, retry, credits, counters: metrics, stop, refreshCredits: () => readings.refresh() }),
    credits,
    stop,
    coordinator,
    storedForm,
  });
  return { client, credits, reserve, rate, gate, coordinator, stop, readings, lookups };
}

export interface OpenedInput {
  source: CsvSource;
  targets: LookupTarget[];
  domainColumn: LookupTarget | undefined;
  headerLine: boolean;
  columns: ColumnSet;
}

/**
 * The input's dialect and header, which columns hold the keys, and the columns the run adds:
 * all of it checked before any request (a wrong --column or --fields is the user's to fix).
 */
async function openInput(settings: EnrichSettings, resources: Resources): Promise<OpenedInput> {
  const read = await openCsv(settings.input, {
    ...(settings.delimiter === undefined ? {} : { delimiter: settings.delimiter }),
    ...(settings.encoding === undefined ? {} : { encoding: settings.encoding }),
    header: settings.header,
  });
  resources.onFailure(() => read.destroy());
  const inputName = typeof settings.input === 'string' ? (settings.input === '-' ? 'standard input' : settings.input) : 'the input stream';
  const { targets, headerLine, source } = await keyColumns(read, { by: settings.by, columns: settings.columns, header: settings.header, inputName, warn: settings.warn });
  const header = source.header.map(fromBytes);
  const domainColumn = headerLine ? domainColumnFor(header, targets, settings.extras) : undefined;
  return { source, targets, domainColumn, headerLine, columns: addedColumns(settings, targets, header) };
}

/** The columns the run adds, checked against the input's header (before any request). */
export function addedColumns(settings: EnrichSettings, targets: readonly LookupTarget[], header: readonly string[]): ColumnSet {
  const flags = { mx: settings.extras.includes('mx'), whois: settings.extras.includes('whois'), company: settings.extras.includes('company'), source: targets.length > 1 };
  const choice = { prefix: settings.prefix, fields: settings.fields };
  checkColumnChoice(columnKind(targets), flags, choice, header);
  return columnsFor(columnKind(targets), flags, choice);
}

function openWriter(settings: EnrichSettings, input: OpenedInput): RowWriter {
  return new RowWriter({
    output: settings.output,
    errors: settings.errors,
    format: settings.format,
    header: input.source.header,
    columns: input.columns,
    recordDelimiter: input.source.recordDelimiter,
    delimiter: input.source.delimiter,
    bom: input.source.outputBom,
    headerLine: input.headerLine,
    ...(settings.stdout ? { stdout: settings.stdout } : {}),
  });
}

function openStore(settings: EnrichSettings, resources: Resources): ResultStore {
  if (settings.store instanceof ResultStore) return settings.store;
  const flush = settings.tuning.storeFlushIntervalMs;
  const store = ResultStore.open({
    path: settings.store,
    ...(flush === undefined ? {} : { flushIntervalMs: flush }),
    // A silent pause of half a minute at start would look like a hang.
    onUpgrade: (from, to) =>
      settings.warn(`Upgrading the result store at ${settings.store} from schema v${from} to v${to}, once: about 30 s per million stored answers`),
  });
  resources.defer(() => store.close());
  return store;
}

async function connectCoordinator(url: string, service: string, client: LeadClient, resources: Resources): Promise<Coordinator> {
  // Loaded only with --redis: ioredis is the costliest import of all.
  const { Coordinator } = await import('../cluster/coordinator.js');
  const coordinator = await Coordinator.connect({ url, service, tokenFingerprint: client.transport.tokenFingerprint() });
  resources.defer(() => coordinator.close());
  return coordinator;
}

/** The reserve guard, alone or shared through Redis; a run that may spend nothing stops here. */
async function creditAccount(
  account: AccountReading,
  reserve: number,
  coordinator: Coordinator | undefined,
  stop: RunStop,
  warn: (line: string) => void,
): Promise<CreditAccount> {
  const options = { balance: account.balance, reserve };
  const credits: CreditAccount = coordinator ? await SharedCreditGuard.create(options, coordinator) : new CreditGuard(options);
  if (account.outOfCredits) {
    warn('The API answered 402 (out of credits) to the account read: no lookups will be made');
    credits.markExhausted();
    stop.stop('credits');
  } else if (credits.atReserve) {
    warn(`The balance (${account.balance}) is at or below the credit reserve (${reserve}): no lookups will be made`);
    credits.stop();
    stop.stop('credits');
  }
  return credits;
}

async function openGate(
  settings: EnrichSettings,
  rate: RatePlan,
  account: AccountReading,
  client: LeadClient,
  coordinator: Coordinator | undefined,
  metrics: RunMetrics,
): Promise<RateGate> {
  const gate = new RateGate({
    rpm: rate.rpm,
    windowMs: settings.tuning.windowMs,
    facts: rate.facts,
    ...(settings.concurrency === undefined ? {} : { maxConcurrency: settings.concurrency }),
    edgeMarginMs: settings.tuning.edgeMarginMs,
    resync: async () => {
      try {
        return parseServiceLimits(await client.getLimits()).resetAt;
      } catch (error) {
        // The summary counts every 429 the run was sent, this question's too.
        if (error instanceof RateLimitedError) metrics.rateLimited += 1;
        throw error;
      }
    },
    ...(coordinator ? { coordinator, latencyHintMs: account.latencyMs } : {}),
  });
  // The shared reservoir did not see our two start-up calls (credits, limits): count them in
  // the window the server counted them in (the credits call may be in the one before: counting
  // it later errs on the safe side).
  if (coordinator && account.limits.resetAt) await gate.chargeOutside(2, account.limits.resetAt.getTime());
  return gate;
}

/** The caller's abort is an interrupt (a second: quit); Redis lost stops lookups; either drops the gate's queue. */
function wireStops(settings: EnrichSettings, stop: RunStop, gate: RateGate, coordinator: Coordinator | undefined): void {
  stop.onDropQueue(() => void gate.stop());
  const signal = settings.signal;
  if (signal?.aborted) stop.stop('interrupt');
  else signal?.addEventListener('abort', () => stop.stop('interrupt'), { once: true });
  if (settings.quit?.aborted) stop.quit();
  else settings.quit?.addEventListener('abort', () => stop.quit(), { once: true });
  coordinator?.onLost((error) => {
    settings.warn(error.message);
    stop.stop('redis', error);
  });
  if (coordinator?.lost) stop.stop('redis', coordinator.lost);
}

/** The planner of a prepared run's rows (plan → look up), the same for enrich and enrichRows. */
export function plannerFor(run: Pick<PreparedRun, 'settings' | 'source' | 'targets' | 'domainColumn' | 'lookups'>, metrics: RunMetrics): BatchPlanner {
  return new BatchPlanner({
    targets: run.targets,
    domainColumn: run.domainColumn,
    extras: run.settings.extras,
    lookups: run.lookups,
    width: run.source.header.length,
    shard: run.settings.shard,
    invalidUtf8: run.source.encoding === 'utf-8' ? metrics.invalidUtf8 : undefined,
    sawInvalidUtf8: () => run.source.sawInvalidUtf8(),
  });
}

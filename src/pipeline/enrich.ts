// Orchestration of one run: read → plan → look up → write (design.md, "Data path").
// Rows stream through a bounded reorder window, so memory stays flat whatever the file size and
// rows leave in input order; the reader waits whenever the window or the writer is full.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { LeadClient } from '../api/client.js';
import { ConfigError, LeadEnrichError, PaymentRequiredError, RateLimitedError, UnauthorizedError } from '../api/errors.js';
import { parseServiceLimits, type RateLimitFacts } from '../api/limits.js';
import type { CompanyLead, Credits, Lead, MxResult, WhoisResult } from '../api/types.js';
import { ResultStore } from '../store/result-store.js';
import { defaultStorePath } from '../store/default-path.js';
import { columnsFor, type RowData } from './columns.js';
import { CreditGuard, SharedCreditGuard, type BillableOperation, type CreditAccount } from './credits.js';
import type { Coordinator } from '../cluster/coordinator.js';
import { Lookups, isAnswered, type LookupOutcome } from './lookup.js';
import {
  LOOKUP_OPERATION,
  detectDomainColumn,
  detectTarget,
  domainForRow,
  normalizeDomain,
  planRow,
  type LookupKind,
  type LookupTarget,
  type Shard,
} from './plan.js';
import { RateGate } from './rate.js';
import { openCsv, fromBytes, type CsvSource } from './read.js';
import { RetryPolicy, sleep } from './retry.js';
import { RowWriter, type Billing, type FinishedRow, type RowStatus } from './write.js';

export interface EnrichOptions {
  /** CSV path, '-' for stdin, or a readable stream. */
  input: string | Readable;
  /** Enriched output path, or '-' for stdout. Default: `<input>.enriched.csv` beside the input. */
  output?: string | undefined;
  /** Error sidecar path. Default: `<output name>.errors.csv` beside the output. */
  errors?: string | undefined;
  by?: LookupKind | undefined;
  column?: string | undefined;
  with?: Array<'mx' | 'whois'> | undefined;
  format?: 'csv' | 'jsonl' | undefined;

  /** The API: a ready client, or a base URL and token. */
  client?: LeadClient | undefined;
  baseUrl?: string | undefined;
  token?: string | undefined;
  /** Names the server in the store, so answers of different services never mix. Default: the base URL. */
  service?: string | undefined;

  /** Requests per minute; default sized from /account/limits. */
  rpm?: number | undefined;
  /** Most requests in flight; default sized from rate and latency. */
  concurrency?: number | undefined;
  /** Credits never to spend; default low_credit_balance_min_threshold. */
  minCredits?: number | undefined;
  /** Retries of a transient failure. Default 4. */
  retries?: number | undefined;

  /** Result store path, or an open store. Default: the per-user cache (LEAD_ENRICH_STORE). */
  store?: string | ResultStore | undefined;
  /** Stored answers older than this (ms) are fetched again. Default 30 days. */
  maxAgeMs?: number | undefined;
  /** Ignore answers stored by earlier runs. */
  refresh?: boolean | undefined;

  /** Share the rate limit, credit reserve and answers with other workers through this Redis. */
  redis?: string | undefined;
  /** Process only the rows whose key hashes to shard `index` (1-based) of `count`. */
  shard?: Shard | undefined;

  /** Aborting stops new lookups; the remaining rows are written as skipped/interrupted. */
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: EnrichProgress) => void) | undefined;
  onWarning?: ((line: string) => void) | undefined;
  stdout?: Writable | undefined;
  /** Knobs for tests and benchmarks. */
  tuning?: EnrichTuning | undefined;
}

export interface EnrichTuning {
  /** The server's rate window (60 s in production). */
  windowMs?: number;
  progressIntervalMs?: number;
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  creditsRefreshMs?: number;
  /** How long in-flight requests may finish after an interrupt. */
  drainTimeoutMs?: number;
  edgeMarginMs?: number;
  reorderWindow?: number;
  storeFlushIntervalMs?: number;
}

export interface EnrichProgress {
  /** Rows read so far (ahead of rowsDone by the rows in flight). */
  rowsRead: number;
  rowsDone: number;
  found: number;
  notFound: number;
  errors: number;
  skipped: number;
  requests: number;
  rateLimited: number;
  creditsSpent: number;
  bytesRead: number;
  totalBytes: number | undefined;
  elapsedMs: number;
}

export interface EnrichSummary {
  input: string;
  output: string | undefined;
  errorsFile: string | undefined;
  lookup: { kind: LookupKind; column: string; with: Array<'mx' | 'whois'> };
  rows: number;
  status: Record<RowStatus, number>;
  billing: Record<Billing, number>;
  errorCodes: Record<string, number>;
  requests: number;
  retries: number;
  rateLimited: number;
  credits: { before: number; after: number; spent: number; reserve: number; exact: boolean };
  rpm: number;
  concurrency: number;
  elapsedMs: number;
  rowsPerMinute: number;
  /** Why lookups stopped early, if they did. */
  stoppedBy: 'credits' | 'interrupt' | 'redis' | undefined;
  shard: Shard | undefined;
}

const DAY = 24 * 60 * 60 * 1000;

function defaultOutput(input: string | Readable, format: 'csv' | 'jsonl', shard: Shard | undefined): string {
  if (typeof input !== 'string' || input === '-') return '-';
  const ext = path.extname(input);
  const stem = ext ? input.slice(0, -ext.length) : input;
  // Workers on shards of one input in one folder must not write over each other's outputs.
  const part = shard ? `.${shard.index}-of-${shard.count}` : '';
  return `${stem}.enriched${part}.${format === 'jsonl' ? 'jsonl' : 'csv'}`;
}

function defaultErrors(output: string, input: string | Readable): string | undefined {
  const base = output !== '-' ? output : typeof input === 'string' && input !== '-' ? input : undefined;
  if (base === undefined) return undefined;
  const ext = path.extname(base);
  return `${ext ? base.slice(0, -ext.length) : base}.errors.csv`;
}

interface Slot {
  value?: FinishedRow;
  pending?: Promise<FinishedRow>;
  /** What to write if the run is interrupted before the row is answered. */
  placeholder?: FinishedRow;
}

/** Runs the whole pipeline and returns its summary. Throws only for fatal errors (config, input, 401). */
export async function enrich(options: EnrichOptions): Promise<EnrichSummary> {
  const started = Date.now();
  const tuning = options.tuning ?? {};
  const format = options.format ?? 'csv';
  const extras = options.with ?? [];
  const warn = options.onWarning ?? (() => {});
  const output = options.output ?? defaultOutput(options.input, format, options.shard);
  const errorsPath = options.errors ?? defaultErrors(output, options.input);
  if (typeof options.input === 'string' && options.input !== '-' && output !== '-' && path.resolve(output) === path.resolve(options.input)) {
    throw new ConfigError('The output would overwrite the input: choose another -o path');
  }

  const ownClient = !options.client;
  const client =
    options.client ??
    new LeadClient({
      baseUrl: options.baseUrl ?? '',
      token: options.token ?? '',
    });
  const service = options.service ?? client.baseUrl;
  const ownStore = !(options.store instanceof ResultStore);
  let store: ResultStore | undefined;
  let source: CsvSource | undefined;
  let writer: RowWriter | undefined;
  let gate: RateGate | undefined;
  let coordinator: Coordinator | undefined;
  const timers: NodeJS.Timeout[] = [];

  try {
    source = await openCsv(options.input);
    const header = source.header;
    const target = detectTarget(header.map(fromBytes), { ...(options.by ? { by: options.by } : {}), ...(options.column ? { column: options.column } : {}) });
    const domainColumn = extras.length > 0 ? detectDomainColumn(header.map(fromBytes), target) : undefined;
    store =
      options.store instanceof ResultStore
        ? options.store
        : ResultStore.open({
            path: options.store ?? defaultStorePath(),
            ...(tuning.storeFlushIntervalMs === undefined ? {} : { flushIntervalMs: tuning.storeFlushIntervalMs }),
          });

    // Before the first lookup: the balance and the rate window (cli-contract, issue "Rate").
    const retry = new RetryPolicy({
      ...(options.retries === undefined ? {} : { retries: options.retries }),
      ...(tuning.retryBaseDelayMs === undefined ? {} : { baseDelayMs: tuning.retryBaseDelayMs }),
      ...(tuning.retryMaxDelayMs === undefined ? {} : { maxDelayMs: tuning.retryMaxDelayMs }),
    });
    // No gate exists yet: a 429 here just waits for the server's hint (or a second) and tries again.
    const startupHooks = {
      onRateLimited: (error: { retryAt: Date | undefined }) => sleep(Math.min(windowMsOf(tuning), Math.max(1000, (error.retryAt?.getTime() ?? 0) - Date.now()))),
    };
    // A server at zero balance may answer 402 to everything (behaviour notes, "Credits"): that is
    // a balance of nothing, not a fatal error. No lookup is made; every row is still written.
    let outOfCredits = false;
    const creditsData = await retry.run(() => client.getCredits(), startupHooks).catch((error: unknown) => {
      if (!(error instanceof PaymentRequiredError)) return rethrowStartup(error);
      outOfCredits = true;
      return { total_remaining_credits: 0, plan_remaining_credits: {}, low_credit_balance_min_threshold: 0 } as unknown as Credits;
    });
    const limitsAsked = Date.now();
    const limits: RateLimitFacts = await retry
      .run(() => client.getLimits(), startupHooks)
      .then(parseServiceLimits, (error: unknown) => {
        // Out of credits the rate does not matter: nothing will be sent.
        if (!(error instanceof PaymentRequiredError)) return rethrowStartup(error);
        outOfCredits = true;
        return { rpm: options.rpm ?? 1, remaining: 0, resetAt: undefined, bulkConcurrency: undefined };
      });
    const limitsLatencyMs = Date.now() - limitsAsked;
    const reserve = options.minCredits ?? creditsData.low_credit_balance_min_threshold ?? 0;
    if (options.redis) {
      // Loaded only with --redis: ioredis is the costliest import of all.
      const { Coordinator } = await import('../cluster/coordinator.js');
      coordinator = await Coordinator.connect({ url: options.redis, service, tokenFingerprint: client.transport.tokenFingerprint() });
    }
    const guardOptions = { balance: creditsData.total_remaining_credits, reserve };
    const credits: CreditAccount = coordinator ? await SharedCreditGuard.create(guardOptions, coordinator) : new CreditGuard(guardOptions);
    if (outOfCredits) {
      warn('The API answered 402 (out of credits) to the account read: no lookups will be made');
      credits.markExhausted();
    } else if (credits.atReserve) {
      warn(`The balance (${creditsData.total_remaining_credits}) is at or below the credit reserve (${reserve}): no lookups will be made`);
      credits.stop();
    }
    const rpm = options.rpm ?? limits.rpm;
    if (rpm < 1) throw new ConfigError(`The account allows no requests (rate limit ${limits.rpm} RPM): nothing can be looked up`);
    const windowMs = windowMsOf(tuning);
    gate = new RateGate({
      rpm,
      windowMs,
      facts: options.rpm === undefined || options.rpm >= limits.rpm ? limits : { remaining: Math.min(options.rpm, limits.remaining), resetAt: limits.resetAt },
      ...(options.concurrency === undefined ? {} : { maxConcurrency: options.concurrency }),
      ...(tuning.edgeMarginMs === undefined ? {} : { edgeMarginMs: tuning.edgeMarginMs }),
      resync: async () => {
        try {
          return parseServiceLimits(await client.getLimits()).resetAt;
        } catch (error) {
          // The summary counts every 429 the run was sent, this question's too.
          if (error instanceof RateLimitedError) lookups.counters.rateLimited += 1;
          throw error;
        }
      },
      ...(coordinator ? { coordinator, latencyHintMs: limitsLatencyMs } : {}),
    });
    const activeGate = gate;
    // The shared reservoir did not see our two start-up calls (credits, limits): count them in
    // the window the server counted them in (the credits call may be in the one before: counting
    // it later errs on the safe side).
    if (coordinator && limits.resetAt) await gate.chargeOutside(2, limits.resetAt.getTime());

    const interrupt = new AbortController();
    // Every waiting retry and claim listens to it: many at once is normal, not a leak.
    setMaxListeners(0, interrupt.signal);
    let fatal: LeadEnrichError | undefined;
    const onAbort = () => {
      interrupt.abort();
      void activeGate.stop();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    // Redis gone: no new lookups (queued ones are dropped); what is done is written.
    coordinator?.onLost((error) => {
      warn(error.message);
      void activeGate.stop();
    });

    // One reading of /account/credits at a time, through the gate like every request.
    let refreshing: Promise<void> | undefined;
    let lastReading = Date.now();
    let requestsAtReading = 0;
    const refreshCredits = (): Promise<void> => {
      refreshing ??= activeGate
        .schedule(() => client.getCredits())
        .then((fresh) => {
          credits.reading(fresh.total_remaining_credits);
          lastReading = Date.now();
          requestsAtReading = lookups.counters.requests;
        })
        .finally(() => {
          refreshing = undefined;
        });
      return refreshing;
    };
    const lookups: Lookups = new Lookups({
      client,
      store,
      service,
      runId: randomUUID(),
      maxAgeMs: options.maxAgeMs ?? 30 * DAY,
      refresh: options.refresh ?? false,
      gate,
      retry,
      credits,
      coordinator,
      signal: interrupt.signal,
      onFatal: (error) => {
        fatal ??= error;
        interrupt.abort();
        void activeGate.stop();
      },
      refreshCredits,
    });
    // Re-read the balance now and then while requests are made, to correct the estimate.
    const creditsRefreshMs = tuning.creditsRefreshMs ?? 60_000;
    const creditsTimer = setInterval(() => {
      if (lookups.counters.requests > requestsAtReading && Date.now() - lastReading >= creditsRefreshMs) {
        refreshCredits().catch(() => {});
      }
    }, Math.min(creditsRefreshMs, 5_000));
    creditsTimer.unref();
    timers.push(creditsTimer);

    const columns = columnsFor(target.kind, { mx: extras.includes('mx'), whois: extras.includes('whois') });
    writer = new RowWriter({
      output,
      errors: errorsPath,
      format,
      header,
      columns,
      recordDelimiter: source.recordDelimiter,
      bom: source.bom,
      ...(options.stdout ? { stdout: options.stdout } : {}),
    });

    const summary = newTally();
    const planBatch = batchPlanner({ target, domainColumn, extras, lookups, width: header.length, shard: options.shard });
    let rowNumber = 0;
    const progress = (): EnrichProgress => ({
      rowsRead: rowNumber,
      rowsDone: summary.rows,
      found: summary.status.found,
      notFound: summary.status.not_found,
      errors: summary.status.error,
      skipped: summary.status.skipped,
      requests: lookups.counters.requests,
      rateLimited: lookups.counters.rateLimited,
      creditsSpent: Math.max(0, credits.startBalance - credits.estimatedBalance),
      bytesRead: source!.bytesRead(),
      totalBytes: source!.totalBytes,
      elapsedMs: Date.now() - started,
    });
    if (options.onProgress) {
      const onProgress = options.onProgress;
      const timer = setInterval(() => onProgress(progress()), tuning.progressIntervalMs ?? 1000);
      timer.unref();
      timers.push(timer);
    }

    // The reorder window: rows enter in input order and leave in input order. A row answered
    // synchronously (store, invalid key) is ready at once; the others wait in the window, and the
    // reader waits when the window is full.
    const windowSize = tuning.reorderWindow ?? 4096;
    const slots: Slot[] = [];
    let drainDeadline: Promise<void> | undefined;
    // Waits for a promise or for the interrupt, whichever comes first. (Not Promise.race with one
    // long-lived "interrupted" promise: every race would leave a reaction on it for the whole run.)
    const untilSettledOrInterrupted = (promise: Promise<unknown>): Promise<void> =>
      new Promise<void>((resolve) => {
        const done = (): void => {
          interrupt.signal.removeEventListener('abort', done);
          resolve();
        };
        interrupt.signal.addEventListener('abort', done, { once: true });
        promise.then(done, done);
      });
    // After an interrupt, rows in flight get drainTimeoutMs to finish, then are written as skipped.
    const settleAfterInterrupt = (slot: Slot): Promise<FinishedRow> => {
      drainDeadline ??= new Promise((resolve) => setTimeout(resolve, tuning.drainTimeoutMs ?? 10_000).unref());
      return Promise.race([slot.pending!, drainDeadline.then(() => undefined)]).then(
        (row) => row ?? { ...slot.placeholder!, errorCode: 'interrupted', errorMessage: 'not looked up: the run was stopped' },
      );
    };
    /** Writes the ready rows at the head; with `all`, or while the window is full, waits for the head. */
    const flush = async (all: boolean): Promise<void> => {
      for (;;) {
        const ready: FinishedRow[] = [];
        while (slots.length > 0 && slots[0]!.value !== undefined) ready.push(slots.shift()!.value!);
        for (const row of ready) tally(summary, row);
        const wait = writer!.writeRows(ready);
        if (wait) await wait;
        if (fatal || slots.length === 0 || (!all && slots.length < windowSize)) return;
        const head = slots[0]!;
        if (!interrupt.signal.aborted) {
          // An interrupt while we wait must not wait for this row's request to time out.
          await untilSettledOrInterrupted(head.pending!);
        }
        if (head.value === undefined) head.value = await settleAfterInterrupt(head);
        if (fatal) return;
      }
    };

    // Rows waiting for the network each hold a chain of promises and a place in the limiter's
    // queue; queuing more of them than the gate can have in flight buys nothing but memory, so
    // the reader waits for one to settle past twice the gate's concurrency. Rows the store
    // answers are not counted: the reorder window alone bounds them.
    let waitingRows = 0;
    let oneSettled: { promise: Promise<void>; resolve: () => void } | undefined;
    const settled = (): void => {
      waitingRows -= 1;
      oneSettled?.resolve();
      oneSettled = undefined;
    };
    const maxWaitingRows = (): number => Math.max(MIN_WAITING_ROWS, 2 * activeGate.stats.concurrency);

    for await (const batch of source.batches) {
      const firstRow = rowNumber + 1;
      // Read (parsed), if not all started yet: the total's estimate compares it with bytes read.
      rowNumber += batch.length;
      for (const { row, cells, result } of planBatch(batch, firstRow)) {
        const answer = typeof result === 'function' ? result() : result;
        if (answer instanceof Promise) {
          const slot: Slot = { placeholder: { row, cells, status: 'skipped', billing: 'none', data: {} } };
          waitingRows += 1;
          slot.pending = answer.then((finished) => (slot.value = finished)).finally(settled);
          slots.push(slot);
          while (waitingRows >= maxWaitingRows() && !fatal && !interrupt.signal.aborted) {
            if (!oneSettled) {
              let resolve!: () => void;
              const promise = new Promise<void>((r) => (resolve = r));
              oneSettled = { promise, resolve };
            }
            await untilSettledOrInterrupted(oneSettled.promise);
            // A batch of a slow run takes minutes: write what is ready meanwhile (progress too).
            await flush(false);
          }
        } else {
          slots.push({ value: answer });
        }
      }
      await flush(false);
      if (fatal) break;
    }
    if (!fatal) await flush(true);
    if (fatal) {
      // Answers already paid for may still be on their way: give them the drain time to land in
      // the store, so that the run after the new token does not pay for them again.
      await Promise.allSettled(slots.filter((slot) => slot.pending).map((slot) => settleAfterInterrupt(slot)));
      throw fatal;
    }

    // A last reading of the balance tells what the run really spent.
    let after = credits.estimatedBalance;
    let exact = lookups.counters.requests === 0;
    if (!exact && !interrupt.signal.aborted) {
      try {
        await refreshCredits();
        after = credits.estimatedBalance;
        exact = true;
      } catch {
        // The estimate stands; the summary says it is one.
      }
    }
    const files = await writer.commit();
    const elapsedMs = Date.now() - started;
    const stoppedBy = coordinator?.lost
      ? 'redis'
      : interrupt.signal.aborted
        ? 'interrupt'
        : summary.errorCodes.credit_reserve
          ? 'credits'
          : undefined;
    return {
      input: typeof options.input === 'string' ? options.input : '(stream)',
      output: files.output ?? (output === '-' ? '-' : undefined),
      errorsFile: files.errors,
      lookup: { kind: target.kind, column: target.columnName, with: extras },
      rows: summary.rows,
      status: summary.status,
      billing: summary.billing,
      errorCodes: summary.errorCodes,
      requests: lookups.counters.requests,
      retries: lookups.counters.retries,
      rateLimited: lookups.counters.rateLimited,
      credits: { before: credits.startBalance, after, spent: credits.startBalance - after, reserve, exact },
      rpm,
      concurrency: gate.stats.concurrency,
      elapsedMs,
      rowsPerMinute: elapsedMs > 0 ? Math.round((summary.rows * 60_000) / elapsedMs) : summary.rows,
      stoppedBy,
      shard: options.shard,
    };
  } catch (error) {
    await writer?.abort();
    source?.destroy();
    throw error;
  } finally {
    for (const timer of timers) clearInterval(timer);
    await gate?.stop();
    if (ownStore) store?.close();
    if (ownClient) client.close();
    await coordinator?.close();
  }
}

const windowMsOf = (tuning: EnrichTuning): number => tuning.windowMs ?? 60_000;

/** The fewest rows allowed to wait for the network at once, whatever the gate's concurrency. */
const MIN_WAITING_ROWS = 64;


function rethrowStartup(error: unknown): never {
  if (error instanceof UnauthorizedError) throw error;
  if (error instanceof LeadEnrichError) {
    throw new LeadEnrichError(error.code, `Cannot read the account before starting: ${error.message}`, { cause: error });
  }
  throw error;
}

interface Tally {
  rows: number;
  status: Record<RowStatus, number>;
  billing: Record<Billing, number>;
  errorCodes: Record<string, number>;
}

function newTally(): Tally {
  return {
    rows: 0,
    status: { found: 0, not_found: 0, error: 0, skipped: 0 },
    billing: { charged: 0, free: 0, cached: 0, duplicate: 0, none: 0 },
    errorCodes: {},
  };
}

function tally(t: Tally, row: FinishedRow): void {
  t.rows += 1;
  t.status[row.status] += 1;
  t.billing[row.billing] += 1;
  if (row.errorCode) t.errorCodes[row.errorCode] = (t.errorCodes[row.errorCode] ?? 0) + 1;
}

interface PlannerDeps {
  shard: Shard | undefined;
  target: LookupTarget;
  domainColumn: LookupTarget | undefined;
  extras: Array<'mx' | 'whois'>;
  lookups: Lookups;
  width: number;
}

/**
 * plan for a batch of rows: a row is finished at once (invalid key), or comes with the function
 * that looks it up, synchronous when every answer is already known. The caller starts each one,
 * so it decides how many wait for the network.
 */
function batchPlanner(
  deps: PlannerDeps,
): (batch: string[][], firstRow: number) => Array<{ row: number; cells: string[]; result: FinishedRow | (() => FinishedRow | Promise<FinishedRow>) }> {
  const { target, domainColumn, extras, lookups, width, shard } = deps;
  const op = LOOKUP_OPERATION[target.kind] as BillableOperation;

  const invalid = (cells: string[], row: number, message: string): FinishedRow => ({
    row,
    cells,
    status: 'error',
    billing: 'none',
    data: {},
    errorCode: 'invalid_input',
    errorMessage: message,
  });

  const fromOutcome = (cells: string[], row: number, outcome: LookupOutcome, data: RowData): FinishedRow =>
    isAnswered(outcome)
      ? { row, cells, status: outcome.kind, billing: outcome.billing, data }
      : { row, cells, status: outcome.kind, billing: 'none', data, errorCode: outcome.code, errorMessage: outcome.message };

  const leadOf = (outcome: LookupOutcome): Lead | CompanyLead | undefined =>
    isAnswered(outcome) ? ((outcome.data as { lead?: Lead }).lead ?? undefined) : undefined;

  const withExtras = async (cells: string[], row: number, key: string, primary: LookupOutcome): Promise<FinishedRow> => {
    const lead = leadOf(primary);
    const base = fromOutcome(cells, row, primary, { lead });
    if (primary.kind !== 'found' && primary.kind !== 'not_found') return base;
    let domain = domainForRow(target.kind, key, domainColumn ? fromBytes(cells[domainColumn.columnIndex] ?? '') : undefined);
    if (domain === undefined && target.kind === 'url' && lead && typeof (lead as Lead).company_domain === 'string') {
      const fromLead = normalizeDomain((lead as Lead).company_domain!);
      domain = fromLead.ok ? fromLead.key : undefined;
    }
    if (domain === undefined) return base;
    const [mx, whois] = await Promise.all(
      (['mx', 'whois'] as const).map((extra) => (extras.includes(extra) ? lookups.resolve(extra, domain) : undefined)),
    );
    base.data = {
      lead,
      ...(mx?.kind === 'found' ? { mx: mx.data as MxResult } : {}),
      ...(whois?.kind === 'found' ? { whois: whois.data as WhoisResult } : {}),
    };
    for (const [name, outcome] of [['MX', mx], ['Whois', whois]] as const) {
      if (!outcome || isAnswered(outcome)) continue;
      if (base.status === 'found' || base.status === 'not_found') {
        base.status = outcome.kind;
        base.errorCode = outcome.code;
        base.errorMessage = `${name} of ${domain}: ${outcome.message}`;
      }
    }
    return base;
  };

  type Planned = { row: number; cells: string[]; key: string } | FinishedRow;
  const plan = (cells: string[], row: number): Planned | undefined => {
    const planned = planRow(cells, target, width, shard);
    if (planned.kind === 'elsewhere') return undefined;
    if (planned.kind === 'invalid') return invalid(cells, row, planned.message);
    return { row, cells, key: planned.key };
  };

  const lookUp = ({ row, cells, key }: { row: number; cells: string[]; key: string }): FinishedRow | Promise<FinishedRow> => {
    const primary = lookups.resolve(op, key);
    if (extras.length === 0) {
      return primary instanceof Promise
        ? primary.then((outcome) => fromOutcome(cells, row, outcome, { lead: leadOf(outcome) }))
        : fromOutcome(cells, row, primary, { lead: leadOf(primary) });
    }
    return Promise.resolve(primary).then((outcome) => withExtras(cells, row, key, outcome));
  };

  return (batch, firstRow) => {
    const planned = batch.flatMap((cells, i) => plan(cells, firstRow + i) ?? []);
    // One store query for the batch's keys instead of one per row.
    lookups.prefetch(op, [...new Set(planned.flatMap((p) => ('key' in p ? [p.key] : [])))]);
    return planned.map((p) => ({ row: p.row, cells: p.cells, result: 'key' in p ? () => lookUp(p) : p }));
  };
}

// The run assembly: the one place a run is put together, for enrich, enrichRows and the dry run.
// What every run has: the API client, the store, the run's one stop and its request path (built
// whole; the rate gate and the credit reserve are its slots, filled below). A run that looks up
// then gets the account's reading (down that path), the Redis coordinator, the credit reserve,
// the rate gate, the look-up step and its writer. Whether the run stops before it starts
// (credits) is decided here too. Each resource is registered for release as it is made.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ApiClient } from '../api/client.js';
import { ApiUnavailableError, ConfigError } from '../api/errors.js';
import type { Coordinator } from '../cluster/coordinator.js';
import { DEFAULTS } from '../options/defaults.js';
import { readAccount, type AccountReading } from '../lookup/account.js';
import { isPeriodLimit } from '../core/budget-periods.js';
import { Budgets, type SpendLedger } from '../lookup/budget.js';
import { redisLedger, storeLedger } from '../lookup/spend-ledgers.js';
import type { CreditAccount } from '../lookup/credits.js';
import { redisClaims, type KeyClaims } from '../lookup/key-claims.js';
import { Lookups, type StoredForm } from '../lookup/lookups.js';
import { StoreKeyClaims } from '../lookup/store-key-claims.js';
import type { RateGate } from '../lookup/rate/rate-gate.js';
import { rateFor, type RatePlan } from '../lookup/rate/rate-plan.js';
import { RequestPath } from '../lookup/request-path/request-path.js';
import { RequestTimeline } from '../lookup/request-path/request-timeline.js';
import { RetryPolicy } from '../lookup/request-path/retry-policy.js';
import { KeyCensus } from '../plan/key-census.js';
import type { LookupTarget } from '../plan/plan.js';
import type { CsvSource } from '../read/index.js';
import { ResultStore } from '../store/result-store.js';
import type { ChangeReport } from '../store/change-report.js';
import { ChangeListing } from './change-listing.js';
import { ANSWER_CELLS } from '../write/columns.js';
import type { RowSink } from '../write/row-writer.js';
import type { StoredAnswers } from './count-rows.js';
import type { Resources } from './resources.js';
import { accountOrNone, creditAccount } from './run-account.js';
import { runGoing } from '../core/processes.js';
import type { RunColumns } from './run-columns.js';
import { holdsStaleAnswers, ordersRefreshes, refreshCutoff, refreshLine, type StoredAges } from './refresh-order.js';
import { RunStop } from './run-stop.js';
import { transportOf, type EnrichSettings } from './settings.js';
import { accountStopLine, tellAvailability, wireCoordinator, wireInterrupts } from './stop-wiring.js';

/** What every run opens, the dry run too. */
export interface OpenedRun {
  readonly settings: EnrichSettings;
  readonly api: ApiClient;
  /** The API the store's answers are kept under. */
  readonly service: string;
  readonly store: ResultStore;
  readonly stop: RunStop;
  /** The path's lookups per rate window (the report's chart). */
  readonly timeline: RequestTimeline;
  /** The one request path of the run: its counts are the summary's requests, retries and 429s. */
  readonly path: RequestPath;
  readonly stored: StoredAnswers;
  /**
   * When the run judges its stored answers' ages (epoch ms): --max-age counts back from here for the
   * whole run, so that an answer its first count called fresh (the glance that decides whether the
   * account is read at all) is not found stale a second later and looked up unguarded.
   */
  readonly judgedAt: number;
  /** The account's balance and rate, read down the run's path (retried, a 429 waited out). */
  readAccount(): Promise<AccountReading>;
  /**
   * The same read as a run starts: an API that is down is waited for as an outage (the breaker,
   * --patience); undefined when the run gave up on it or was stopped meanwhile (an interrupt).
   */
  awaitAccount(): Promise<AccountReading | undefined>;
  /** The credit reserve: --min-credits, else the account's own threshold (none when it was not read). */
  reserveOf(account: AccountReading | undefined): number;
}

/** The input of a run: its rows' source, which columns hold the keys, and the columns the run adds. */
export interface RunInput extends RunColumns {
  source: CsvSource;
  targets: LookupTarget[];
  domainColumn: LookupTarget | undefined;
  headerLine: boolean;
}

/** How a run that looks up gets its rows and where its results go. */
export interface RunOpening {
  input: RunInput;
  /** 'cells' when the writer needs only the answers' own cells (no JSON.parse). */
  storedForm: StoredForm;
  /** Made last, once nothing before it can fail: no output is begun for a run that cannot start. */
  writer(input: RunInput): RowSink;
}

/** A run that looks up, as progress, summary and report read it. */
export interface RunState extends OpenedRun, Readonly<RunInput> {
  /** The account's own rate limit (requests per window), which `rate.rpm` may be below (--rpm). */
  readonly accountRpm: number;
  /** False when nothing was to be looked up: the account was not read, its balance is unknown. */
  readonly accountRead: boolean;
  readonly credits: CreditAccount;
  readonly reserve: number;
  readonly rate: RatePlan;
  readonly gate: RateGate;
  readonly coordinator: Coordinator | undefined;
  /** --budget and the ledger every charge is recorded in. */
  readonly budgets: Budgets;
  readonly lookups: Lookups;
  /** --changes: what the run lists that earlier runs found, and what it marks reported once its file is in place. */
  readonly listing: ChangeListing | undefined;
  readonly writer: RowSink;
}

/** Opens a run: with `opening`, one that looks up (enrich, enrichRows); without, what the dry run needs. */
export async function openRun(settings: EnrichSettings, resources: Resources): Promise<OpenedRun>;
export async function openRun(settings: EnrichSettings, resources: Resources, opening: RunOpening): Promise<RunState>;
export async function openRun(settings: EnrichSettings, resources: Resources, opening?: RunOpening): Promise<OpenedRun | RunState> {
  const run = openShared(settings, resources, opening !== undefined);
  return opening ? startLookups(run, resources, opening) : run;
}

function openShared(settings: EnrichSettings, resources: Resources, writes: boolean): OpenedRun {
  const api = settings.client?.direct ?? new ApiClient(transportOf(settings));
  if (!settings.client) resources.defer(() => api.close());
  const service = settings.service ?? api.baseUrl;
  const store = openStore(settings, resources, writes);
  const stop = new RunStop();
  wireInterrupts(settings, stop);
  // A commit that fails after the answer came (a full disk): no new request; the run fails.
  resources.defer(store.onWriteFailure((error) => stop.stop('failed', error)));
  const judgedAt = store.now();
  const timeline = new RequestTimeline(Date.now(), settings.tuning.windowMs);
  const path = new RequestPath((op, input) => api.call(op, input as never), {
    timeline,
    retry: new RetryPolicy({ retries: settings.retries, baseDelayMs: settings.tuning.retryBaseDelayMs, maxDelayMs: settings.tuning.retryMaxDelayMs }),
    windowMs: settings.tuning.windowMs,
    noMoreRequests: stop.requestsSignal,
    halt: stop.signal,
    noMoreLookups: stop.lookupsSignal,
    breaker: { patienceMs: settings.patience, onChange: (event) => tellAvailability(event, settings, stop) },
    // The answers that came are committed before another request is paid for (durability: a full
    // disk then costs at most the requests in flight, and a kill only those).
    beforeSend: () => store.committed(),
  });
  return {
    settings,
    api,
    service,
    store,
    stop,
    timeline,
    path,
    stored: storedAnswers(settings, store, service, judgedAt),
    judgedAt,
    readAccount: () => readAccount(path, settings.rpm),
    awaitAccount: () => awaitAccount(path, settings.rpm, stop),
    reserveOf: (account) => settings.minCredits ?? account?.threshold ?? 0,
  };
}

async function startLookups(run: OpenedRun, resources: Resources, opening: RunOpening): Promise<RunState> {
  const { settings, api, service, store, stop, path } = run;
  const { offline, account } = await accountOrNone(settings, run.stored, run);
  const reserve = run.reserveOf(account);
  const coordinator = settings.redis ? await connectCoordinator(settings.redis, service, api, resources) : undefined;
  const credits = await creditAccount(offline ? undefined : account, reserve, coordinator, stop, settings.tellAvailability);
  const rate = rateFor(settings.rpm, account.limits);
  if (rate.rpm < 1) throw new ConfigError(`The account allows no requests (rate limit ${account.limits.rpm} RPM): nothing can be looked up`);
  const gate = await openGate(path, settings, rate, account, coordinator);
  // After the coordinator's: released before it (the gate's engine may still talk to Redis).
  resources.defer(() => path.close());
  wireCoordinator(settings, stop, coordinator);
  const runId = randomUUID();
  // Going until its resources are released: then what it still holds in the store is another run's to lapse.
  resources.defer(runGoing(runId));
  const budgets = budgetsOf(run, runId, coordinator, resources);
  stop.onStop((reason) => {
    const line = accountStopLine(reason, reserve, budgets.stopped);
    if (line) settings.tellAvailability(line);
  });
  // A balance reading is asked again only after a 429 (once: the gate holds it until the pause ends).
  const readingRetry = new RetryPolicy({ retries: 0, maxRateLimited: 1 });
  path.guardCredits({ credits, budgets, onReserveReached: () => stop.stop('credits'), refreshEveryMs: settings.tuning.creditsRefreshMs, readingRetry });
  const ages = storedAges(run);
  const refreshBefore =
    ordersRefreshes(settings) && !stop.lookupsStopped && holdsStaleAnswers(settings, ages)
      ? await refreshCutoff(settings, ages, await spendable(budgets, credits))
      : undefined;
  if (refreshBefore !== undefined) settings.notice(refreshLine(refreshBefore));
  const lookups = lookupsOf(run, runId, credits, coordinator, resources, opening.storedForm, refreshBefore);
  const { input } = opening;
  const listing =
    settings.changes === undefined ? undefined : new ChangeListing(changeReportOf(run, runId, resources), input.changes, input.targets, settings.with);
  const writer = opening.writer(input);
  return {
    ...run,
    ...input,
    accountRpm: account.limits.rpm,
    accountRead: !offline,
    credits,
    reserve,
    rate,
    gate,
    coordinator,
    budgets,
    lookups,
    listing,
    writer,
  };
}

/**
 * --changes: opened before the first lookup, so that what earlier runs stored is told from this
 * run's own. Another run listing the earlier changes of this store and service now: said once.
 */
function changeReportOf(run: OpenedRun, runId: string, resources: Resources): ChangeReport {
  const report = run.store.changeReport(run.service, runId);
  resources.defer(() => report.close());
  const holder = report.holder;
  if (holder) {
    run.settings.warn(
      `another run (pid ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`}) is listing the changes stored before it in ${run.store.path}: ` +
        'this run lists the changes it finds itself, and leaves the earlier ones to the next run with --changes',
    );
  }
  return report;
}

/**
 * The account read through the breaker. A run that gave up on the API (--patience: the stop is
 * api_unavailable) or was stopped (an interrupt) reads nothing: it sends nothing, and writes every
 * row, the store's answers with them (docs/cli-contract.md, "Every night, unattended").
 */
async function awaitAccount(path: RequestPath, rpm: number | undefined, stop: RunStop): Promise<AccountReading | undefined> {
  try {
    return await readAccount(path, rpm, { atStart: true });
  } catch (error) {
    if (error instanceof ApiUnavailableError || stop.requestsStopped) return undefined;
    throw error;
  }
}

/** The run's budgets, over the ledger where every charge is recorded: Redis's with --redis, else the store's. */
function budgetsOf(run: OpenedRun, runId: string, coordinator: Coordinator | undefined, resources: Resources): Budgets {
  const { settings, store, service } = run;
  // Once per run, before its first call: the per-call rows no budget reads any more are folded
  // into the per-day totals (store/ledger-upkeep.ts), so the ledger stays small for years.
  if (!store.readonly) store.spend().fold();
  const local = coordinator ? undefined : storeLedger(store, runId, DEFAULTS.spendHoldLeaseMs, service);
  if (local) resources.defer(() => local.close());
  const ledger = local ?? redisLedger(coordinator!, store, service);
  return new Budgets({ limits: settings.budget, ledger, now: settings.tuning.now, service, runId });
}

/** What the night may spend: the least its budgets have left, and no more than the balance above the reserve. */
async function spendable(budgets: Budgets, credits: CreditAccount): Promise<number> {
  const left = (await budgets.standings()).map((standing) => standing.left);
  return Math.min(...left, credits.estimatedBalance - credits.reserve);
}

/** The stored answers' ages as the run sees them: its service, its clock, its cells (no answer parsed). */
function storedAges(run: OpenedRun): StoredAges {
  return { store: run.store, service: run.service, layout: (op) => ANSWER_CELLS.layout(op), now: run.judgedAt };
}

function lookupsOf(
  run: OpenedRun,
  runId: string,
  credits: CreditAccount,
  coordinator: Coordinator | undefined,
  resources: Resources,
  storedForm: StoredForm,
  refreshBefore: number | undefined,
): Lookups {
  const { settings, store, service, stop, path } = run;
  return new Lookups({
    store,
    service,
    runId,
    freshSince: run.judgedAt - settings.maxAge,
    refresh: settings.refresh,
    send: (op, key, soon) => path.lookup(op, key, soon),
    credits,
    stop,
    claims: keyClaims({ store, service, runId, coordinator, stop, resources }),
    claimPollMs: DEFAULTS.claimPollMs,
    cells: ANSWER_CELLS,
    storedForm,
    refreshBefore,
  });
}

/**
 * Where the run claims the keys it looks up: in Redis with --redis (across machines), else in the
 * store's file (other runs on this machine sharing it); none for a store no one else can open.
 */
function keyClaims(deps: {
  store: ResultStore;
  service: string;
  runId: string;
  coordinator: Coordinator | undefined;
  stop: RunStop;
  resources: Resources;
}): KeyClaims | undefined {
  const { store, service, runId, coordinator, stop, resources } = deps;
  if (coordinator) return redisClaims(coordinator);
  if (store.path === ':memory:' || store.readonly) return undefined;
  const claims = new StoreKeyClaims({
    store,
    service,
    runId,
    leaseMs: DEFAULTS.claimLeaseMs,
    sweepMs: DEFAULTS.claimSweepMs,
    onFailure: (error) => stop.stop('failed', error),
  });
  resources.defer(() => claims.close());
  return claims;
}

/**
 * The run's store: the caller's own, or the file opened (and closed when the run ends). `writes`:
 * a run's, which commits on its flush interval and says when it upgrades an older store; the dry
 * run and the spend estimate only read, and upgrade it silently.
 */
export function openStore(settings: EnrichSettings, resources: Resources, writes: boolean): ResultStore {
  if (settings.store instanceof ResultStore) return settings.store;
  const flush = settings.tuning.storeFlushIntervalMs;
  const file = settings.store;
  const store = ResultStore.open({
    path: file,
    cells: ANSWER_CELLS,
    ...(writes ? { ...(flush === undefined ? {} : { flushIntervalMs: flush }), onUpgrade: upgradeLine(file, settings.warn) } : {}),
  });
  resources.defer(() => store.close());
  return store;
}

/** A silent pause of half a minute at start would look like a hang. */
function upgradeLine(file: string, warn: (line: string) => void): (from: number, to: number, slow: boolean) => void {
  return (from, to, slow) =>
    warn(`Upgrading the result store at ${file} from schema v${from} to v${to}, once${slow ? ': about 30 s per million stored answers' : ''}`);
}

/** The answers the store holds, as this run sees them: its service, --max-age, --refresh. */
export function storedAnswers(settings: EnrichSettings, store: ResultStore, service: string, judgedAt = store.now()): StoredAnswers {
  return () => new KeyCensus(store, service, judgedAt - settings.maxAge, settings.refresh);
}

/** Where the dry run reads what the day and month budgets have spent: Redis with --redis, else the store. */
export async function spendStanding(run: OpenedRun, resources: Resources): Promise<Pick<SpendLedger, 'standing'>> {
  if (!run.settings.redis || !run.settings.budget.some(isPeriodLimit)) {
    const { ledger } = run.store.spend();
    return { standing: (period) => ledger.standing(period, run.service) };
  }
  return (await connectCoordinator(run.settings.redis, run.service, run.api, resources)).spend;
}

async function connectCoordinator(url: string, service: string, api: ApiClient, resources: Resources): Promise<Coordinator> {
  // Loaded only with --redis: ioredis is the costliest import of all.
  const { Coordinator } = await import('../cluster/coordinator.js');
  const coordinator = await Coordinator.connect({ url, service, tokenFingerprint: api.transport.tokenFingerprint() });
  resources.defer(() => coordinator.close());
  return coordinator;
}

async function openGate(
  path: RequestPath,
  settings: EnrichSettings,
  rate: RatePlan,
  account: AccountReading,
  coordinator: Coordinator | undefined,
): Promise<RateGate> {
  const gate = path.openGate({
    rpm: rate.rpm,
    windowMs: settings.tuning.windowMs,
    facts: rate.facts,
    ...(settings.concurrency === undefined ? {} : { maxConcurrency: settings.concurrency }),
    edgeMarginMs: settings.tuning.edgeMarginMs,
    ...(coordinator ? { coordinator, latencyHintMs: account.latencyMs } : {}),
  });
  // The shared reservoir did not see our two start-up calls (credits, limits): count them in
  // the window the server counted them in (the credits call may be in the one before: counting
  // it later errs on the safe side).
  if (coordinator && account.limits.resetAt) await gate.chargeOutside(2, account.limits.resetAt.getTime());
  return gate;
}

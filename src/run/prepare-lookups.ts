// Everything between a row's key and its answer, made before the first row is read: the API
// client, the store, the request path and what sizes it (the account's balance and rate, read
// down the path itself), the Redis coordinator, the credit reserve, the rate gate, and the
// look-up step. Whether the run stops before it starts (credits) is decided here too. Each
// resource is registered for release as it is made.
import { RunBudget } from '../lookup/budget.js';
import { isStreamInput } from './input-wait.js';
import { randomUUID } from 'node:crypto';
import { ApiClient } from '../api/client.js';
import { ConfigError, UnauthorizedError } from '../api/errors.js';
import { DEFAULTS } from '../options/defaults.js';
import type { Coordinator } from '../cluster/coordinator.js';
import { readAccount, type AccountReading } from '../lookup/account.js';
import { CreditGuard, SharedCreditGuard, type CreditAccount } from '../lookup/credits.js';
import { redisClaims, type KeyClaims } from '../lookup/key-claims.js';
import { Lookups } from '../lookup/lookups.js';
import { StoreKeyClaims } from '../lookup/store-key-claims.js';
import type { RateGate } from '../lookup/rate/rate-gate.js';
import { rateFor, type RatePlan } from '../lookup/rate/rate-plan.js';
import type { Availability } from '../lookup/request-path/breaker.js';
import { RequestPath } from '../lookup/request-path/request-path.js';
import { RequestTimeline } from '../lookup/request-path/request-timeline.js';
import { formatDuration } from '../core/duration.js';
import { RetryPolicy } from '../lookup/request-path/retry-policy.js';
import type { StoredForm } from '../lookup/lookups.js';
import { ResultStore } from '../store/result-store.js';
import { ANSWER_CELLS } from '../write/columns.js';
import type { Resources } from './resources.js';
import { RunStop, type StopReason } from './run-stop.js';
import { transportOf, type EnrichSettings } from './settings.js';
import { countRows } from './count-rows.js';

export interface PreparedLookups {
  /** The one request path of the run: its counts are the summary's requests, retries and 429s. */
  path: RequestPath;
  /** The path's lookups per rate window (the report's chart). */
  timeline: RequestTimeline;
  /** The account's own rate limit (requests per window), which `rate.rpm` may be below (--rpm). */
  accountRpm: number;
  /** False when nothing was to be looked up: the account was not read, its balance is unknown. */
  accountRead: boolean;
  credits: CreditAccount;
  reserve: number;
  rate: RatePlan;
  gate: RateGate;
  coordinator: Coordinator | undefined;
  stop: RunStop;
  lookups: Lookups;
}

export async function prepareLookups(settings: EnrichSettings, resources: Resources, storedForm: StoredForm = 'data'): Promise<PreparedLookups> {
  const api = settings.client?.direct ?? new ApiClient(transportOf(settings));
  if (!settings.client) resources.defer(() => api.close());
  const service = settings.service ?? api.baseUrl;
  const store = openStore(settings, resources);
  const stop = new RunStop();
  // A commit that fails after the answer came (a full disk): no new request; the run fails.
  resources.defer(store.onWriteFailure((error) => stop.stop('failed', error)));
  const timeline = new RequestTimeline(Date.now(), settings.tuning.windowMs);
  const path = new RequestPath((op, input) => api.call(op, input as never), {
    timeline,
    retry: new RetryPolicy({ retries: settings.retries, baseDelayMs: settings.tuning.retryBaseDelayMs, maxDelayMs: settings.tuning.retryMaxDelayMs }),
    windowMs: settings.tuning.windowMs,
    noMoreRequests: stop.requestsSignal,
    halt: stop.signal,
    breaker: { patienceMs: settings.patienceMs, onChange: (event) => tellAvailability(event, settings, stop) },
    // The answers that came are committed before another request is paid for (durability: a full
    // disk then costs at most the requests in flight, and a kill only those).
    beforeSend: () => store.committed(),
  });
  const { offline, account } = await accountOrNone(settings, store, service, path);
  const reserve = settings.minCredits ?? account.threshold;
  const coordinator = settings.redis ? await connectCoordinator(settings.redis, service, api, resources) : undefined;
  // Nothing will be sent, so no balance to guard: the reserve is not checked against a balance never read.
  const credits = offline ? new CreditGuard({ balance: 0, reserve: 0 }) : await creditAccount(account, reserve, coordinator, stop, settings.warn);
  const rate = rateFor(settings.rpm, account.limits);
  if (rate.rpm < 1) throw new ConfigError(`The account allows no requests (rate limit ${account.limits.rpm} RPM): nothing can be looked up`);
  const gate = await openGate(path, settings, rate, account, coordinator);
  // After the coordinator's: released before it (the gate's engine may still talk to Redis).
  resources.defer(() => path.close());
  wireStops(settings, stop, coordinator);
  stop.onStop((reason) => {
    const line = accountStopLine(reason, reserve, settings.budget);
    if (line) settings.warn(line);
  });
  const budget = settings.budget === undefined ? undefined : new RunBudget(settings.budget);
  path.guardCredits({ credits, budget, onReserveReached: () => stop.stop('credits'), refreshEveryMs: settings.tuning.creditsRefreshMs });
  const runId = randomUUID();
  const lookups = new Lookups({
    store,
    service,
    runId,
    freshForMs: settings.maxAgeMs,
    refresh: settings.refresh,
    send: (op, key, soon) => path.lookup(op, key, soon),
    credits,
    stop,
    claims: keyClaims({ store, service, runId, coordinator, stop, resources }),
    claimPollMs: DEFAULTS.claimPollMs,
    cells: ANSWER_CELLS,
    storedForm,
  });
  return { path, timeline, accountRpm: account.limits.rpm, accountRead: !offline, credits, reserve, rate, gate, coordinator, stop, lookups };
}

/** Rows counted against the store before the account is read: beyond them, the count waits for the API to fail. */
const GLANCE_ROWS = 100_000;

/**
 * A re-run whose every answer is stored sends no request: it must not need the API either (an
 * offline laptop, an outage). Told by counting the rows against the store before the account is
 * read, a count that stops at the first key not stored (a run with work to do pays a glance at its
 * first rows) or after GLANCE_ROWS (a re-run of a big file is not read twice when the API answers:
 * only when the account read then fails is the rest counted). A regular file only (stdin or a pipe cannot be read
 * twice), never with --redis (the other workers' claims decide) nor --refresh (every key is asked again).
 */
async function accountOrNone(settings: EnrichSettings, store: ResultStore, service: string, path: RequestPath): Promise<{ offline: boolean; account: AccountReading }> {
  const read = () => readAccount(path, settings.rpm);
  if (isStreamInput(settings.input) || settings.redis || settings.refresh) return { offline: false, account: await read() };
  const glance = await countRows(settings, store, service, { stopAbove: 0, maxRows: GLANCE_ROWS, quiet: true });
  if (glance.lookupsToMake > 0) return { offline: false, account: await read() };
  if (glance.cutAtRows) {
    try {
      return { offline: false, account: await read() };
    } catch (error) {
      if (error instanceof UnauthorizedError) throw error;
      const whole = await countRows(settings, store, service, { stopAbove: 0, quiet: true });
      if (whole.lookupsToMake > 0) throw error;
      settings.notice(`no lookup to make: every answer is stored; going on without the API, which could not be read (${(error as Error).message})`);
      return { offline: true, account: accountUnread(settings) };
    }
  }
  settings.notice('no lookup to make: every answer is stored; the account was not read (the API was not asked)');
  return { offline: true, account: accountUnread(settings) };
}

/** The account of a run that sends nothing: no balance read, nothing reserved, the rate as given. */
function accountUnread(settings: EnrichSettings): AccountReading {
  const rpm = settings.rpm ?? 60;
  return { balance: 0, threshold: 0, limits: { rpm, remaining: rpm, resetAt: undefined, bulkConcurrency: undefined }, outOfCredits: false, latencyMs: 0 };
}

/** An API that goes down and comes back is one event: one line each way (docs/cli-contract.md, "An API that fails"). */
function tellAvailability(event: Availability, settings: EnrichSettings, stop: RunStop): void {
  const patience = formatDuration(settings.patienceMs);
  switch (event.kind) {
    case 'unavailable':
      settings.tellAvailability(`The API is unavailable (${event.failure}): holding the rows, one request at a time until it answers, for up to --patience ${patience}`);
      return;
    case 'back':
      settings.tellAvailability(`The API is back after ${formatDuration(event.downMs)}: going on at full pace`);
      return;
    case 'gave_up':
      settings.tellAvailability(`The API stayed unavailable for ${formatDuration(event.downMs)} (--patience ${patience}): the rows not looked up are skipped; the same command finishes the work later`);
      stop.stop('api_unavailable');
      return;
  }
}

/**
 * Where the run claims the keys it looks up: in Redis with --redis (across machines), else in the
 * store's file (other runs on this machine sharing it); none for a store no one else can open.
 */
function keyClaims(deps: { store: ResultStore; service: string; runId: string; coordinator: Coordinator | undefined; stop: RunStop; resources: Resources }): KeyClaims | undefined {
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

function openStore(settings: EnrichSettings, resources: Resources): ResultStore {
  if (settings.store instanceof ResultStore) return settings.store;
  const flush = settings.tuning.storeFlushIntervalMs;
  const store = ResultStore.open({
    path: settings.store,
    ...(flush === undefined ? {} : { flushIntervalMs: flush }),
    cells: ANSWER_CELLS,
    // A silent pause of half a minute at start would look like a hang.
    onUpgrade: (from, to, slow) =>
      settings.warn(`Upgrading the result store at ${settings.store} from schema v${from} to v${to}, once${slow ? ': about 30 s per million stored answers' : ''}`),
  });
  resources.defer(() => store.close());
  return store;
}

async function connectCoordinator(url: string, service: string, api: ApiClient, resources: Resources): Promise<Coordinator> {
  // Loaded only with --redis: ioredis is the costliest import of all.
  const { Coordinator } = await import('../cluster/coordinator.js');
  const coordinator = await Coordinator.connect({ url, service, tokenFingerprint: api.transport.tokenFingerprint() });
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

async function openGate(path: RequestPath, settings: EnrichSettings, rate: RatePlan, account: AccountReading, coordinator: Coordinator | undefined): Promise<RateGate> {
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

/**
 * The line said the moment the account stops the run: the rows still queued are written as
 * skipped in a moment, but a run that ends minutes later must not leave the user wondering why it
 * went quiet meanwhile. Every stop the account makes has one (the reserve's, a 402's).
 */
function accountStopLine(reason: StopReason, reserve: number, budget: number | undefined): string | undefined {
  if (reason === 'credits') {
    return `No more lookups: the credit balance reached the reserve (${reserve} credits) or the API answered 402; the rows not looked up are written as skipped (credit_reserve). Add credits and run the same command again to finish`;
  }
  if (reason === 'budget') {
    return `No more lookups: the next one could have spent more than --budget (${budget} credits); the rows not looked up are written as skipped (budget). Run the same command again (with a larger --budget) to finish`;
  }
  return undefined;
}

/** The caller's abort is an interrupt (a second: quit); Redis lost stops lookups. */
function wireStops(settings: EnrichSettings, stop: RunStop, coordinator: Coordinator | undefined): void {
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

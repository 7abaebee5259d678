// The defaults of a run's knobs (the octokit way: public options are all optional, and this table
// fills them): those no option sets, and those of options that layers below the registry read too
// (retries, patience, the rate window), which their rows in registry.ts show. An option only the
// run reads has its default in its row. Durations are milliseconds, written with the unit they are
// read in.
const SECOND = 1000;
const MINUTE = 60 * SECOND;

export const DEFAULTS = {
  format: 'csv' as 'csv' | 'jsonl',
  /** Retries of a transient failure after the first attempt. */
  retries: 4,
  /** The server's rate window (docs/api-behaviour-notes.md, "Rate limiting": 60-second windows). */
  windowMs: 60 * SECOND,
  /** Refills wait this long after a window edge (at most a twentieth of the window). */
  edgeMarginMs: 250,
  progressIntervalMs: 1 * SECOND,
  retryBaseDelayMs: 500,
  retryMaxDelayMs: 30 * SECOND,
  /** 429s tolerated for one request before it is given up as `rate_limited`. */
  maxRateLimited: 20,
  /** The balance is re-read this often while requests are made. */
  creditsRefreshMs: 1 * MINUTE,
  /** After an interrupt, requests in flight get this long to finish. */
  drainTimeoutMs: 10 * SECOND,
  /** Rows held to leave in input order (a bounded reorder window keeps memory flat). */
  reorderWindow: 4096,
  /** Rows allowed to wait for the network, at least (else twice the gate's concurrency). */
  minWaitingRows: 64,
  /**
   * Latency assumed until requests measure it. The gate grants twice this much of requests ahead
   * of their turn, and a row's --with lookup queues behind them: at a second, a run with --with
   * wrote its first row two seconds after the first answer; half a second still covers the
   * latency of a real API at full rate until 16 answers measure it.
   */
  latencyGuessMs: SECOND / 2,
  /** Automatic concurrency never goes above this (sockets are not free); --concurrency may. */
  maxAutoConcurrency: 256,
  /**
   * The store commits every answer as it arrives (0): a kill -9 then costs only the requests in
   * flight. A positive value batches the commits that long, or until storeFlushBatchSize wait.
   */
  storeFlushIntervalMs: 0,
  storeFlushBatchSize: 200,
  /** A claim on a key in flight holds this long unless its run renews it (store-claims.ts). */
  claimLeaseMs: 30 * SECOND,
  /** Claims of answered keys are deleted, and the others renewed, this often. */
  claimSweepMs: 1 * SECOND,
  /**
   * Credits a run holds against the day and month budgets for a call in flight lapse this long
   * after its last reservation unless settled: longer than any call (store-spend.ts).
   */
  spendHoldLeaseMs: 5 * MINUTE,
  /** How often a run waiting for another run's answer to a key looks again. */
  claimPollMs: 100,
  /** How long a run waits for an API that is down before it gives up on it (--patience). */
  patienceMs: 10 * MINUTE,
  /** While the API is down, one probe this long after it went down, then half as long again each time, up to probeMaxMs. */
  probeMinMs: 1 * SECOND,
  probeMaxMs: 30 * SECOND,
} as const;

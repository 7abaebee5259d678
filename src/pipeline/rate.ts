// The one rate limiter every request of a run goes through (lookups, MX, Whois and the account
// re-reads alike), built on Bottleneck:
// - `minTime` paces requests evenly across the window, so no burst lands at a window edge;
// - the reservoir holds what the server's current window still allows. Bottleneck's own refresh
//   is NOT used: its clock starts when the limiter is made, not at the server's reset (#153),
//   and `updateSettings()` stops it for good (#185). Our timer refills at the server's
//   `next_limit_reset`, then every window;
// - a 429 empties the reservoir until the server's `retryAt` (a pause for the whole run);
// - `maxConcurrent` follows Little's law: rate × measured latency, with headroom.
// Bottleneck schedules at most a few hundred jobs a second (design.md). Above FAST_RATE_PER_SECOND
// (far beyond any published plan: 10 to 400 RPM) the same reservoir and concurrency rules run on
// a leaner engine, p-limit plus a token count, where pacing finer than a millisecond means nothing.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import Bottleneck from 'bottleneck';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Coordinator } from '../cluster/coordinator.js';
import type { RateLimitFacts } from '../api/limits.js';
import { RateLimitedError } from '../api/errors.js';

export interface RateGateOptions {
  /** Requests per window this run may use. */
  rpm: number;
  /** Length of the server's rate window (behaviour notes: 60 s). Tests shorten it. */
  windowMs?: number;
  /** What the server said about its current window at start. */
  facts?: Pick<RateLimitFacts, 'remaining' | 'resetAt'>;
  /** Upper bound on requests in flight (--concurrency). */
  maxConcurrency?: number;
  /**
   * Refills wait this long after the window edge, and starts made within this long before it are
   * counted against the new window: a request sent just before the edge may arrive just after it.
   */
  edgeMarginMs?: number;
  /** Asked for a fresh reset time after a 429 that carried no usable hint. */
  resync?: () => Promise<Date | undefined>;
  /**
   * Share the limiter with other workers through Redis (Bottleneck clustering): one reservoir,
   * one pace, one pause for every process on the account.
   */
  coordinator?: Coordinator;
  /**
   * With a coordinator: a first measure of the time between a start and its answer (the start-up
   * account call), used at window edges until the gate's own requests have measured it.
   */
  latencyHintMs?: number;
  /** With a coordinator: the longest a request may run before the cluster stops counting it. */
  jobExpirationMs?: number;
  now?: () => number;
}

/** What RateGate needs from the engine that runs the jobs. */
interface Engine {
  schedule<T>(task: () => Promise<T>): Promise<T>;
  /** Settles once the new value is in force (with Redis: stored). */
  setReservoir(n: number): Promise<void>;
  setConcurrency(n: number): void;
  charge(n: number): Promise<void>;
  /** Requests granted a place in the reservoir that wait for their turn at the pace. */
  waitingGrants(): number;
  stop(): Promise<void>;
}

/** Requests per second above which Bottleneck's own overhead would become the limit. */
export const FAST_RATE_PER_SECOND = 200;

function bottleneckEngine(
  reservoir: number,
  minTime: number,
  concurrency: number,
  cluster?: { coordinator: Coordinator; windowMs: number; expirationMs: number },
): Engine {
  const limiter = new Bottleneck({
    reservoir,
    minTime,
    // With clustering, concurrency stays per worker (below): a cluster-wide count would keep the
    // jobs of a killed worker "running" until they expire and starve the living ones.
    maxConcurrent: cluster ? null : concurrency,
    ...(cluster
      ? {
          // The first worker of the account stores these settings; the others use them.
          id: cluster.coordinator.id,
          datastore: 'ioredis',
          connection: cluster.coordinator.connection,
          clearDatastore: false,
          timeout: cluster.windowMs * 10,
        }
      : {}),
  });
  const jobOptions = cluster ? { expiration: cluster.expirationMs } : {};
  const local: LimitFunction | undefined = cluster ? pLimit(Math.max(1, concurrency)) : undefined;
  // Bottleneck reports job errors here too; ours are handled where schedule() is awaited.
  limiter.on('error', () => {});
  // With clearDatastore false, the settings already in Redis win over the constructor's: those of
  // a run that ended minutes ago (another --rpm, another plan) would pace this one. The pace of the
  // worker that started last is put in force, and the reservoir never left above what the server
  // said remains in this window.
  const ready = cluster
    ? (async () => {
        await limiter.ready();
        await (limiter.updateSettings({ minTime }) as unknown as Promise<Bottleneck>);
        const current = await limiter.currentReservoir();
        if (current !== null && current > reservoir) await limiter.incrementReservoir(reservoir - current);
      })()
    : undefined;
  ready?.catch(() => {});
  const run = <T>(task: () => Promise<T>): Promise<T> => limiter.schedule(jobOptions, task);
  return {
    schedule: (task) => (local ? local(() => ready!.then(() => run(task))) : run(task)),
    // Only the reservoir and maxConcurrent are ever updated: no reservoir refresh is configured,
    // so Bottleneck's #185 (updateSettings stops the refresh) cannot bite.
    // (updateSettings returns a promise, whatever Bottleneck's typings say.)
    setReservoir: async (n) => {
      await (limiter.updateSettings({ reservoir: n }) as unknown as Promise<Bottleneck>);
    },
    setConcurrency: (n) => {
      if (local) local.concurrency = Math.max(1, n);
      else limiter.updateSettings({ maxConcurrent: n });
    },
    // With Redis, also how the other workers hear of a reservoir refilled in Redis directly.
    charge: async (n) => {
      await limiter.incrementReservoir(-n);
    },
    // Bottleneck counts a granted job that waits for its minTime slot as RUNNING.
    waitingGrants: () => limiter.counts().RUNNING,
    // Drops the waiting jobs at once. The promise waits for the jobs still running, which with
    // clustering means every worker's: wait a little, not for the whole cluster.
    stop: () => Promise.race([limiter.stop({ dropWaitingJobs: true }), new Promise<void>((resolve) => setTimeout(resolve, 1000).unref())]),
  };
}

function fastEngine(reservoir: number, concurrency: number): Engine {
  const limit: LimitFunction = pLimit(Math.max(1, concurrency));
  let tokens = reservoir;
  let stopped = false;
  const waiting: Array<(ok: boolean) => void> = [];
  const take = async (): Promise<void> => {
    while (tokens <= 0) {
      if (stopped || !(await new Promise<boolean>((resolve) => waiting.push(resolve)))) throw new GateStoppedError();
    }
    tokens -= 1;
  };
  return {
    schedule: (task) =>
      limit(async () => {
        if (stopped) throw new GateStoppedError();
        await take();
        return task();
      }),
    setReservoir: async (n) => {
      tokens = n;
      for (const wake of waiting.splice(0, Math.max(0, n))) wake(true);
    },
    setConcurrency: (n) => {
      limit.concurrency = Math.max(1, n);
    },
    charge: async (n) => {
      tokens -= n;
    },
    // A token is taken just before the request starts: no grant waits.
    waitingGrants: () => 0,
    stop: async () => {
      stopped = true;
      for (const wake of waiting.splice(0)) wake(false);
    },
  };
}

export interface RateGateStats {
  started: number;
  pauses: number;
  concurrency: number;
}

const DEFAULT_LATENCY_GUESS_MS = 1000;
/** Automatic concurrency never goes above this (sockets are not free); --concurrency may. */
const MAX_AUTO_CONCURRENCY = 256;

export class RateGate {
  readonly rpm: number;
  readonly windowMs: number;
  readonly #engine: Engine;
  readonly #coordinator: Coordinator | undefined;
  readonly #margin: number;
  readonly #maxConcurrency: number;
  readonly #resync: (() => Promise<Date | undefined>) | undefined;
  readonly #now: () => number;
  /** Start times of recent requests, oldest first; pruned at each refill. */
  #recentStarts: number[] = [];
  #windowEnd: number;
  #timer: NodeJS.Timeout | undefined;
  /** When the timer is due: it may fire a millisecond before Date.now() says so. */
  #armedFor = 0;
  #pausedUntil = 0;
  #latencyMs = DEFAULT_LATENCY_GUESS_MS;
  #completions = 0;
  /** A high estimate of the latency: follows a slower answer at once, a faster one slowly. */
  #latencyHighMs: number;
  /** With Redis: this process's event-loop stalls, which delay a granted request's departure. */
  readonly #loopDelay: IntervalHistogram | undefined;
  /** With Redis: the last measured round trip to it (a grant travels it before its request leaves). */
  #redisMs = 0;
  #stopped = false;
  /** One /account/limits re-read at a time after 429s without a hint. */
  #resyncing = false;
  /** Requests per window the server takes: the rpm, or less once a 429 without a hint showed it. */
  #allowance: number;
  /** Requests started in the current window (since #windowStart) that the server did not refuse. */
  #acceptedInWindow = 0;
  #windowStart = 0;
  #learnAtEdge = false;
  readonly stats: RateGateStats = { started: 0, pauses: 0, concurrency: 0 };

  constructor(options: RateGateOptions) {
    if (!(Number.isInteger(options.rpm) && options.rpm > 0)) throw new RangeError(`rpm must be a positive integer, got ${options.rpm}`);
    this.rpm = options.rpm;
    this.#allowance = options.rpm;
    this.windowMs = options.windowMs ?? 60_000;
    this.#now = options.now ?? Date.now;
    // With Redis the refill happens at the edge itself (see #refillCluster), so no margin.
    this.#margin = options.coordinator ? 0 : Math.min(options.edgeMarginMs ?? 250, this.windowMs / 20);
    this.#maxConcurrency = options.maxConcurrency ?? Number.POSITIVE_INFINITY;
    this.#resync = options.resync;
    this.#latencyHighMs = Math.max(0, Math.min(options.latencyHintMs ?? 0, (options.windowMs ?? 60_000) / 10));
    const now = this.#now();
    const resetAt = options.facts?.resetAt?.getTime();
    this.#windowEnd = this.#firstEdge(resetAt, now);
    const initial = Math.min(this.rpm, options.facts?.remaining ?? this.rpm);
    this.stats.concurrency = this.#concurrencyFor(this.#latencyMs);
    const minTime = this.windowMs / this.rpm;
    this.#coordinator = options.coordinator;
    if (this.#coordinator) {
      this.#loopDelay = monitorEventLoopDelay({ resolution: 10 });
      this.#loopDelay.enable();
    }
    this.#engine = options.coordinator
      ? // Bottleneck's Redis scripts need whole milliseconds: a fractional minTime stalls the cluster.
        bottleneckEngine(Math.max(0, initial), Math.ceil(minTime), this.stats.concurrency, {
          coordinator: options.coordinator,
          windowMs: this.windowMs,
          expirationMs: options.jobExpirationMs ?? 120_000,
        })
      : 1000 / minTime > FAST_RATE_PER_SECOND
        ? fastEngine(Math.max(0, initial), this.stats.concurrency)
        : bottleneckEngine(Math.max(0, initial), minTime, this.stats.concurrency);
    this.#armRefill(this.#windowEnd + this.#margin);
  }

  /**
   * The server's next reset. One that passed while the run was starting (a slow start, a Redis
   * connection) moves on by whole windows: the edges stay the server's, and with Redis every
   * worker names the same edges. One absurdly far ahead or long past (clock skew) is replaced by
   * one window from now.
   */
  #firstEdge(resetAt: number | undefined, now: number): number {
    if (resetAt === undefined || resetAt > now + this.windowMs + 1000 || resetAt <= now - 10 * this.windowMs) return now + this.windowMs;
    if (resetAt > now) return resetAt;
    return resetAt + (Math.floor((now - resetAt) / this.windowMs) + 1) * this.windowMs;
  }

  /** Runs `task` when the rate allows. Rejects with GateStoppedError once stop() was called. */
  async schedule<T>(task: () => Promise<T>): Promise<T> {
    if (this.#stopped) throw new GateStoppedError();
    let ran = false;
    // Until it starts, a job can be dropped by stop() even when the engine cannot (Redis gone).
    let drop: (error: Error) => void = () => {};
    const dropped = new Promise<never>((_, reject) => {
      drop = reject;
    });
    dropped.catch(() => {});
    this.#waiting.add(drop);
    try {
      return await Promise.race([dropped, this.#engine.schedule(() => {
        this.#waiting.delete(drop);
        if (this.#stopped) return Promise.reject(new GateStoppedError());
        ran = true;
        const started = this.#now();
        this.#recentStarts.push(started);
        // Only the starts since shortly before the next edge matter; keep the list short at high rates.
        if (this.#recentStarts.length > 4096) this.#recentStarts = this.#recentStarts.filter((t) => t >= started - 3 * this.#margin);
        this.stats.started += 1;
        // Whatever the answer, the server counted the request, unless it refused it (429).
        let refused = false;
        return task()
          .catch((error: unknown) => {
            refused = error instanceof RateLimitedError;
            throw error;
          })
          .finally(() => {
            if (!refused && started >= this.#windowStart) this.#acceptedInWindow += 1;
            this.#observe(this.#now() - started);
          });
      })]);
    } catch (error) {
      // The task's own failure (a request's error) passes through as it is.
      if (ran && !(error instanceof Bottleneck.BottleneckError)) throw error;
      // A job dropped by stop() rejects with Bottleneck's own error: report it as ours.
      if (this.#stopped && (error instanceof Bottleneck.BottleneckError || error instanceof GateStoppedError)) throw new GateStoppedError();
      // With Redis, a failure of the limiter itself (not of the request) means Redis is gone.
      if (this.#coordinator && !(error instanceof GateStoppedError)) throw this.#coordinator.fail(error);
      throw error;
    } finally {
      this.#waiting.delete(drop);
    }
  }

  readonly #waiting = new Set<(error: Error) => void>();

  /**
   * The server said "too many": hold every request until `until` (or a fresh reset time), then
   * start again with what the new window allows. Many 429s at once extend one pause.
   */
  pause(until: Date | undefined): void {
    if (this.#stopped) return;
    const now = this.#now();
    this.stats.pauses += 1;
    // No hint at all: what the server accepted in this window is the best measure of what it
    // allows (--rpm may say more than the account has). Learned at the next edge, when the
    // window's answers are all in (accepted ones may arrive after the first 429).
    if (!until && !this.#coordinator) this.#learnAtEdge = true;
    void this.#engine.setReservoir(0).catch(() => {});
    if (until && until.getTime() > now) {
      this.#pauseUntil(until.getTime());
      return;
    }
    // No usable hint: wait at least to our own window edge, and ask the server when it resets;
    // once for a burst of 429s, not once each (the question is a request of the window too).
    this.#pauseUntil(Math.max(this.#windowEnd, now + Math.min(this.windowMs, 1000)));
    if (this.#resync && !this.#resyncing) {
      this.#resyncing = true;
      this.#resync()
        .then(
          (resetAt) => {
            if (resetAt && resetAt.getTime() > this.#now()) this.#pauseUntil(resetAt.getTime());
          },
          () => {},
        )
        .finally(() => {
          this.#resyncing = false;
        });
    }
  }


  #pauseUntil(until: number): void {
    if (until <= this.#pausedUntil) return;
    this.#pausedUntil = until;
    this.#coordinator?.pauseUntil(until).catch(() => {});
    // Hints come rounded up to the second (Retry-After, x-ratelimit-reset, the 1030 message):
    // one within a second after one of our edges confirms the server's windows are where we
    // think. Any other is the server's own reset: its windows start there.
    const afterEdge = (((until - this.#windowEnd) % this.windowMs) + this.windowMs) % this.windowMs;
    if (afterEdge > 1000 + this.#margin) this.#windowEnd = until;
    this.#armRefill(until + this.#margin);
  }

  #armRefill(at: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#armedFor = at;
    // Not unref'd: while the window is used up this timer may be all that keeps the process
    // alive until the next refill. stop() clears it.
    this.#timer = setTimeout(() => this.#refill(), Math.max(0, at - this.#now()));
  }

  /** Moves to the window `now` is in, and returns its edge (a pause may have skipped several). */
  #enterWindow(now: number): number {
    while (this.#windowEnd <= now) this.#windowEnd += this.windowMs;
    return this.#windowEnd - this.windowMs;
  }

  #refill(): void {
    if (this.#stopped) return;
    const now = Math.max(this.#now(), this.#armedFor);
    if (now < this.#pausedUntil) {
      this.#armRefill(this.#pausedUntil + this.#margin);
      return;
    }
    if (this.#coordinator) {
      void this.#refillCluster(this.#coordinator, now);
      return;
    }
    const edge = this.#enterWindow(now - this.#margin);
    // Starts since shortly before the edge may be counted by the server in the new window.
    this.#recentStarts = this.#recentStarts.filter((t) => t >= edge - this.#margin);
    // Bottleneck spends the reservoir when it grants a request, which may then wait for its turn
    // at the pace past the edge: those start in the new window too.
    if (this.#learnAtEdge) {
      this.#learnAtEdge = false;
      // Later windows are filled to that, instead of sending the whole queue to be refused again.
      this.#allowance = Math.min(this.#allowance, Math.max(1, this.#acceptedInWindow));
    }
    this.#acceptedInWindow = 0;
    this.#windowStart = edge;
    const allowed = Math.max(0, this.#allowance - this.#recentStarts.length - this.#engine.waitingGrants());
    void this.#engine.setReservoir(allowed).catch(() => {});
    this.#armRefill(this.#windowEnd + this.#margin);
  }

  /**
   * With several workers, one of them (whoever takes the edge's lock) refills the shared
   * reservoir, unless a worker's 429 paused the cluster past the edge. Starts near the edge are
   * not known cluster-wide, so the refill happens at the edge itself and keeps back, at the
   * shared pace (minTime = window / rpm, kept by Bottleneck in Redis):
   * - what may still be on its way: the requests granted before the edge that may reach the
   *   server after it. Each worker reports its delay: a high measure of the latency (the whole
   *   round trip stands for the one-way part), plus what holds a request between Bottleneck's
   *   grant and its departure: a Redis round trip and the worker's longest event-loop stall in
   *   the last window (on a busy machine, the largest of the three). The longest counts;
   * - what the old reservoir let start since the edge (or the end of a pause), when this timer
   *   ran late;
   * - one more, for the starts that fall exactly on the edge.
   * Then it takes off what workers starting in this window spent outside the limiter
   * (chargeOutside). Every worker names edges alike (the server's resets), so one turn per edge
   * means one refill per window.
   */
  async #refillCluster(coordinator: Coordinator, now: number): Promise<void> {
    const edge = this.#enterWindow(now);
    this.#armRefill(this.#windowEnd);
    try {
      const paused = await coordinator.pausedUntil();
      if (paused > now) {
        this.#pauseUntil(paused);
        return;
      }
      const minTime = this.windowMs / this.rpm;
      const stallMs = (this.#loopDelay?.max ?? 0) / 1e6;
      this.#loopDelay?.reset();
      const asked = this.#now();
      const longestDelayMs = await coordinator.refillTurn(edge, this.windowMs, this.#latencyHighMs + stallMs + this.#redisMs);
      this.#redisMs = this.#now() - asked;
      if (longestDelayMs === undefined) return;
      const onTheirWay = Math.ceil(Math.min(longestDelayMs, this.windowMs / 5) / minTime);
      const sinceEdge = Math.floor(Math.max(0, this.#now() - Math.max(edge, this.#pausedUntil, paused)) / minTime);
      const allowance = Math.max(0, this.rpm - 1 - onTheirWay - sinceEdge);
      const reservoir = await coordinator.refillReservoir(edge, this.windowMs, allowance, minTime);
      // Set in Redis directly (atomically with what it depends on); an increment of nothing is
      // how Bottleneck tells every worker that the reservoir changed.
      if (reservoir === 'late') return;
      if (reservoir === undefined) await this.#engine.setReservoir(allowance);
      else await this.#engine.charge(0);
    } catch {
      // Redis is gone: the coordinator has told the run.
    }
  }

  #concurrencyFor(latencyMs: number): number {
    const perMs = this.rpm / this.windowMs;
    // Little's law: in flight = arrival rate × time in system; doubled for latency spread.
    const wanted = Math.ceil(perMs * latencyMs * 2) + 2;
    const cap = Number.isFinite(this.#maxConcurrency) ? this.#maxConcurrency : MAX_AUTO_CONCURRENCY;
    return Math.max(1, Math.min(cap, wanted));
  }

  #observe(latencyMs: number): void {
    this.#latencyMs = this.#latencyMs * 0.9 + latencyMs * 0.1;
    // Capped at a tenth of the window: a request that hung until its timeout says nothing about
    // the others, and must not hold back most of a window.
    const capped = Math.min(latencyMs, this.windowMs / 10);
    this.#latencyHighMs = capped >= this.#latencyHighMs ? capped : this.#latencyHighMs * 0.98 + capped * 0.02;
    this.#completions += 1;
    if (this.#completions % 16 !== 0 || this.#stopped) return;
    const next = this.#concurrencyFor(this.#latencyMs);
    if (next !== this.stats.concurrency) {
      this.stats.concurrency = next;
      this.#engine.setConcurrency(next);
    }
  }

  /**
   * Counts `n` requests this worker made outside the gate (its start-up account calls) against
   * the shared reservoir of the window that ends at `windowEnd`, the window the server counted
   * them in. Only needed with Redis: alone, the gate is sized from what the server said after
   * those calls. The refill of that window may come before or after this (a busy worker's timer
   * runs late), so both sides count: the reservoir is charged now, and the count is left for a
   * refill still to come, which would overwrite the charge. In a close race both count, never
   * neither.
   */
  async chargeOutside(n: number, windowEnd: number): Promise<void> {
    if (!this.#coordinator || n <= 0 || this.#now() >= windowEnd) return;
    await this.#coordinator.countOutside(windowEnd - this.windowMs, n, this.windowMs);
    await this.#engine.charge(n);
  }

  /** Drops queued jobs (they reject with GateStoppedError); running ones finish. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#loopDelay?.disable();
    for (const drop of this.#waiting) drop(new GateStoppedError());
    this.#waiting.clear();
    await this.#engine.stop();
  }
}

export class GateStoppedError extends Error {
  constructor() {
    super('the run is stopping; request not started');
    this.name = 'GateStoppedError';
  }
}

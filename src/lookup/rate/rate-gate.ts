// The one rate limiter every request of a run goes through (lookups, MX, Whois and the account
// re-reads alike). The 429 policy lives here: a 429 empties the reservoir until the server's
// `retryAt`, a pause for the whole run (and, with Redis, for every worker). The window arithmetic
// is in rate-window.ts, the concurrency model in concurrency.ts, the engines in engines.ts.
import Bottleneck from 'bottleneck';
import type { Coordinator } from '../../cluster/coordinator.js';
import { MAX_RATE_WAIT_MS, type RateLimitFacts } from '../../api/limits.js';
import { RateLimitedError } from '../../api/errors.js';
import { MAX_TIMER_MS } from '../../core/clock.js';
import { DEFAULTS } from '../../options/defaults.js';
import { ClusterRefill } from './cluster-refill.js';
import { ConcurrencyModel, eventLoopBusy } from './concurrency.js';
import { FAST_RATE_PER_SECOND, bottleneckEngine, fastEngine, type Engine, type GatePriority } from './engines.js';
import { GateStoppedError, NotSentError } from './gate-errors.js';
import { RateWindow } from './rate-window.js';

export { FAST_RATE_PER_SECOND, type GatePriority } from './engines.js';
export { GateStoppedError, NotSentError } from './gate-errors.js';

/** What a grant that arrived during a pause resolves with instead of sending its request. */
const HELD: unique symbol = Symbol('held until the pause ends');

export interface RateGateOptions {
  /** Requests per window this run may use: a positive integer (checked where it is given: options/option-table.ts). */
  rpm: number;
  /** Length of the server's rate window (docs/api-behaviour-notes.md: 60 s). Tests shorten it. */
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
  /** Share the limiter with other workers through Redis (Bottleneck clustering). */
  coordinator?: Coordinator;
  /** With a coordinator: a first measure of the latency (the start-up account call). */
  latencyHintMs?: number;
  now?: () => number;
}

export interface RateGateStats {
  started: number;
  pauses: number;
  concurrency: number;
}

export class RateGate {
  readonly rpm: number;
  readonly windowMs: number;
  readonly stats: RateGateStats = { started: 0, pauses: 0, concurrency: 0 };
  readonly #window: RateWindow;
  readonly #concurrency: ConcurrencyModel;
  readonly #engine: Engine;
  readonly #coordinator: Coordinator | undefined;
  readonly #cluster: ClusterRefill | undefined;
  readonly #resync: (() => Promise<Date | undefined>) | undefined;
  readonly #now: () => number;
  /** Jobs not started yet, each with the way to drop it (even when the engine cannot: Redis gone). */
  readonly #waiting = new Set<(error: Error) => void>();
  #timer: NodeJS.Timeout | undefined;
  /** When the timer is due: it may fire a millisecond before Date.now() says so. */
  #armedFor = 0;
  #stopped = false;
  /** dropWaiting() was called: the run sends nothing more but what is asked after it (its last balance reading). */
  #windingDown = false;
  /** One /account/limits re-read at a time after 429s without a hint. */
  #resyncing = false;

  constructor(options: RateGateOptions) {
    this.rpm = options.rpm;
    this.windowMs = options.windowMs ?? DEFAULTS.windowMs;
    this.#now = options.now ?? Date.now;
    this.#resync = options.resync;
    this.#coordinator = options.coordinator;
    this.#window = new RateWindow({
      windowMs: this.windowMs,
      allowance: this.rpm,
      // With Redis the refill happens at the edge itself (cluster-refill.ts), so no margin.
      marginMs: options.coordinator ? 0 : Math.min(options.edgeMarginMs ?? DEFAULTS.edgeMarginMs, this.windowMs / 20),
      resetAt: options.facts?.resetAt?.getTime(),
      now: this.#now(),
    });
    this.#concurrency = new ConcurrencyModel({
      rpm: this.rpm,
      windowMs: this.windowMs,
      maxConcurrency: options.maxConcurrency,
      latencyHintMs: options.latencyHintMs,
      busy: eventLoopBusy(),
    });
    this.stats.concurrency = this.#concurrency.concurrency;
    this.#engine = this.#makeEngine(options);
    this.#cluster = options.coordinator ? new ClusterRefill(options.coordinator) : undefined;
    this.#armRefill(this.#window.windowEnd + this.#window.marginMs);
  }

  #makeEngine(options: RateGateOptions): Engine {
    // What remained was of the server's window at the reading; a reset that passed since (a slow
    // start) began a new window, whole: waiting for the next edge with the old count would idle
    // the run for up to a window.
    const resetAt = options.facts?.resetAt?.getTime();
    const remaining = resetAt !== undefined && resetAt <= this.#now() ? this.rpm : options.facts?.remaining;
    const initial = Math.max(0, Math.min(this.rpm, remaining ?? this.rpm));
    const minTime = this.windowMs / this.rpm;
    const concurrency = this.stats.concurrency;
    if (options.coordinator) {
      // Bottleneck's Redis scripts need whole milliseconds: a fractional minTime stalls the cluster.
      return bottleneckEngine(initial, Math.ceil(minTime), concurrency, {
        coordinator: options.coordinator,
        windowMs: this.windowMs,
      });
    }
    return 1000 / minTime > FAST_RATE_PER_SECOND ? fastEngine(initial, concurrency) : bottleneckEngine(initial, minTime, concurrency);
  }

  /**
   * Runs `task` when the rate allows, queued by `priority` (engines.ts: the probe of an API that is
   * down first, which must not wait behind lookups that will only be held). Rejects with
   * GateStoppedError once stop() was called.
   */
  async schedule<T>(task: () => Promise<T>, priority: GatePriority = 'normal'): Promise<T> {
    if (this.#stopped) throw new GateStoppedError();
    // Winding down, nothing else is sent: a call waits for no pace (nor for the turns the engine
    // granted the dropped jobs), only for a place in the window.
    if (this.#windingDown && this.#now() >= this.#window.pausedUntil && (await this.#engine.takeNow())) return this.#run(task);
    let ran = false;
    let isDropped = false;
    let drop: (error: Error) => void = () => {};
    const dropped = new Promise<never>((_, reject) => {
      drop = (error) => {
        isDropped = true;
        reject(error);
      };
    });
    dropped.catch(() => {});
    try {
      for (;;) {
        this.#waiting.add(drop);
        this.#timer?.ref();
        const granted = await Promise.race([
          dropped,
          this.#engine.schedule((): Promise<T | typeof HELD> => {
            if (this.#stopped) return Promise.reject(new GateStoppedError());
            // Dropped while it waited (dropWaiting): nothing is sent, and its place in the window is given back.
            if (isDropped) return this.#giveBack();
            // Still waiting (stop() drops it) until the pause ends.
            if (this.#now() < this.#window.pausedUntil) return Promise.resolve(HELD);
            this.#waiting.delete(drop);
            this.#unrefWhenIdle();
            ran = true;
            return this.#run(task);
          }, priority),
        ]);
        if (granted !== HELD) return granted;
        await Promise.race([dropped, this.#pauseEnd()]);
      }
    } catch (error) {
      throw this.#failureOf(error, ran);
    } finally {
      this.#waiting.delete(drop);
      this.#unrefWhenIdle();
    }
  }

  /** While a 429 pauses the run: when the pause ends (epoch ms); undefined otherwise. */
  get pausedUntil(): number | undefined {
    const until = this.#window.pausedUntil;
    return until > this.#now() ? until : undefined;
  }

  /**
   * Settles when the current pause is over. A job the engine granted before a 429 paused the run
   * (Bottleneck grants up to `concurrency` jobs ahead of their turn at the pace) is not sent into
   * the pause, where the server would only refuse it: it waits here and asks for a new grant.
   * Unref'd: while a job waits, the refill timer (ref'd) keeps the process alive, and stop() drops it.
   */
  #pauseEnd(): Promise<void> {
    // Woken early by the cap, the caller finds the pause still on and waits again.
    const left = Math.min(MAX_TIMER_MS, Math.max(0, this.#window.pausedUntil - this.#now()));
    return new Promise((resolve) => setTimeout(resolve, left).unref());
  }

  /**
   * A granted job: counted as started, and as accepted by the server unless it answered 429. One
   * that sent nothing after all (NotSentError) gives its place in the window back.
   */
  #run<T>(task: () => Promise<T>): Promise<T> {
    const started = this.#now();
    this.#window.started(started);
    this.stats.started += 1;
    let refused = false;
    let sent = true;
    return task()
      .catch((error: unknown) => {
        refused = error instanceof RateLimitedError;
        sent = !(error instanceof NotSentError);
        throw error;
      })
      .finally(() => {
        if (!sent) {
          this.#window.unstarted(started);
          this.stats.started -= 1;
          void this.#engine.charge(-1).catch(() => {});
          return;
        }
        const settled = this.#now();
        this.#window.settled(started, refused, settled);
        this.#observe(settled - started);
      });
  }

  #failureOf(error: unknown, ran: boolean): unknown {
    // The task's own failure (a request's error) passes through as it is.
    if (ran && !(error instanceof Bottleneck.BottleneckError)) return error;
    // A job dropped by stop() rejects with Bottleneck's own error: report it as ours.
    if (this.#stopped && (error instanceof Bottleneck.BottleneckError || error instanceof GateStoppedError)) return new GateStoppedError();
    // With Redis, a failure of the limiter itself (not of the request) means Redis is gone.
    if (this.#coordinator && !(error instanceof GateStoppedError)) return this.#coordinator.fail(error);
    return error;
  }

  /**
   * The server said "too many": hold every request until `until` (or a fresh reset time), then
   * start again with what the new window allows. Many 429s at once extend one pause.
   */
  pause(until: Date | undefined): void {
    if (this.#stopped) return;
    const now = this.#now();
    this.stats.pauses += 1;
    if (!until && !this.#coordinator) this.#window.learnAtNextEdge(now);
    void this.#engine.setReservoir(0).catch(() => {});
    if (until && until.getTime() > now) {
      this.#pauseUntil(until.getTime());
      return;
    }
    // No usable hint: wait at least to our own window edge, and ask the server when it resets;
    // once for a burst of 429s, not once each (the question is a request of the window too).
    this.#pauseUntil(this.#window.pauseWithoutHint(now));
    if (!this.#resync || this.#resyncing) return;
    this.#resyncing = true;
    this.#resync()
      .then(
        (resetAt) => {
          // A reset past the bound is no window's: the pause to the own window edge stands.
          const at = resetAt?.getTime() ?? 0;
          if (at > this.#now() && at <= this.#now() + MAX_RATE_WAIT_MS) this.#pauseUntil(at);
        },
        () => {},
      )
      .finally(() => {
        this.#resyncing = false;
      });
  }

  #pauseUntil(requested: number): void {
    // The transport refuses longer hints (RateLimitedTooLongError); a library caller's pause is bounded too.
    const until = Math.min(requested, this.#now() + MAX_RATE_WAIT_MS);
    if (!this.#window.pauseUntil(until)) return;
    this.#coordinator?.pauseUntil(until).catch(() => {});
    this.#armRefill(until + this.#window.marginMs);
  }

  #armRefill(at: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#armedFor = at;
    // Ref'd while a request waits for a slot: with the window used up this timer may be all that
    // keeps the process alive until the next refill. Unref'd while none waits, so that an idle
    // gate (a library user's LeadClient between calls) does not keep the process alive. stop() clears it.
    const delay = Math.max(0, at - this.#now());
    // A --rate-window longer than one timer's reach: armed again on the way, never early.
    this.#timer = delay > MAX_TIMER_MS ? setTimeout(() => this.#armRefill(at), MAX_TIMER_MS) : setTimeout(() => this.#refill(), delay);
    this.#unrefWhenIdle();
  }

  #unrefWhenIdle(): void {
    if (this.#waiting.size === 0) this.#timer?.unref();
  }

  #refill(): void {
    if (this.#stopped) return;
    const now = Math.max(this.#now(), this.#armedFor);
    if (now < this.#window.pausedUntil) {
      this.#armRefill(this.#window.pausedUntil + this.#window.marginMs);
      return;
    }
    if (this.#cluster) {
      const edge = this.#window.enterWindow(now);
      this.#armRefill(this.#window.windowEnd);
      void this.#cluster.refill(now, {
        edge,
        now: this.#now,
        rpm: this.rpm,
        windowMs: this.windowMs,
        latencyHighMs: this.#concurrency.latencyHighMs,
        currentPause: () => this.#window.pausedUntil,
        pauseUntil: (until) => this.#pauseUntil(until),
        engine: this.#engine,
      });
      return;
    }
    const allowed = this.#window.refill(now, this.#engine.waitingGrants());
    void this.#engine.setReservoir(allowed).catch(() => {});
    this.#armRefill(this.#window.windowEnd + this.#window.marginMs);
  }

  #observe(latencyMs: number): void {
    const next = this.#concurrency.observe(latencyMs);
    if (next === undefined || this.#stopped) return;
    this.stats.concurrency = next;
    this.#engine.setConcurrency(next);
  }

  /**
   * Counts `n` requests this worker made outside the gate (its start-up account calls) against
   * the shared reservoir of the window that ends at `windowEnd`, the window the server counted
   * them in. Only needed with Redis: alone, the gate is sized from what the server said after
   * those calls. The refill of that window may come before or after this (a busy worker's timer
   * runs late), so both sides count: the reservoir is charged now, and the count is left for a
   * refill still to come, which would overwrite the charge. In a close race both count, never neither.
   */
  async chargeOutside(n: number, windowEnd: number): Promise<void> {
    if (!this.#coordinator || n <= 0 || this.#now() >= windowEnd) return;
    await this.#coordinator.countOutside(windowEnd - this.windowMs, n, this.windowMs);
    await this.#engine.charge(n);
  }

  /** The place of a grant that sends nothing, given back to the engine. */
  #giveBack(): Promise<never> {
    void this.#engine.charge(-1).catch(() => {});
    return Promise.reject(new GateStoppedError());
  }

  /**
   * Drops the jobs waiting for their turn now (they reject with GateStoppedError, at once), and
   * goes on serving the later ones: a run that stopped looking up (the reserve, --budget) must not
   * wait for its queued lookups to be paced out one by one only to be refused, and still reads its
   * balance at the end. The engine still grants the dropped jobs' turns, which send nothing; the
   * calls after this one take a place left in the window at once (schedule()).
   */
  dropWaiting(): void {
    this.#windingDown = true;
    for (const drop of this.#waiting) drop(new GateStoppedError());
    this.#waiting.clear();
  }

  /** Drops queued jobs (they reject with GateStoppedError); running ones finish. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#cluster?.stop();
    for (const drop of this.#waiting) drop(new GateStoppedError());
    this.#waiting.clear();
    await this.#engine.stop();
  }
}

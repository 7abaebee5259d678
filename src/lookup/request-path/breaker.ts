// An API that fails, as one event (docs/cli-contract.md, "An API that fails"): when transient failures
// come from many lookups at once, the API is down. The circuit opens: no lookup is sent but one at
// a time, a probe (a real lookup of a waiting row), at growing intervals; the others are held,
// using none of their retries; when a probe is answered the circuit closes and every held lookup
// goes on, paced by the gate as before. Down for longer than the patience, the run gives up on the
// API: every held lookup, and every later one, fails with ApiUnavailableError. A run's first
// account reads go through it too (docs/cli-contract.md, "Every night, unattended"): they are all
// it sends then, so one that fails opens it, and the read itself is the probe.
//
// A single flaky answer must not open it, nor a few keys retried: it opens after
// OPEN_AFTER_CONSECUTIVE failures in a row, or when FAILED_SHARE of the last SAMPLE attempts
// failed, and only when the failures came from at least MANY_KEYS different keys (closed → open →
// half-open with one probe, as resilience4j and Polly do). Any answer the API gives — a lead, a
// miss, a 400, a 429 — shows it is up.
import { ApiUnavailableError, LeadEnrichError, isOutage } from '../../api/errors.js';
import { isUnknownHost } from '../../api/network-errors.js';
import type { Clock } from '../../core/clock.js';
import { DEFAULTS } from '../../options/defaults.js';
import { NotSentError } from '../rate/gate-errors.js';

export type Availability = { kind: 'unavailable'; since: number; failure: string } | { kind: 'back'; downMs: number } | { kind: 'gave_up'; downMs: number };

export interface BreakerSettings {
  clock: Clock;
  /** How long the API may stay down before the run gives up on it (--patience). */
  patienceMs: number;
  /** Probes come this long after the circuit opens, then half as long again each time, up to probeMaxMs. */
  probeMinMs?: number;
  probeMaxMs?: number;
  /** Told when the API becomes unavailable, comes back, or is given up on. */
  onChange?: (event: Availability) => void;
}

/** What an attempt was let through as: a lookup like any other, or the one probe while the API is down. */
export type Admission = 'closed' | 'probe';

/**
 * A lookup stopped at the gate's end because the API went down while it waited there: not sent.
 * It never leaves the request path (with-breaker.ts waits for a turn again, or makes it the gate's
 * stop), so it carries no words.
 */
export class HeldError extends NotSentError {}

const OPEN_AFTER_CONSECUTIVE = 8;
const MANY_KEYS = 5;
const PROBE_GROWTH = 1.5;
const SAMPLE = 20;
const FAILED_SHARE = 0.6;

interface Held {
  admit(admission: Admission): void;
  refuse(error: Error): void;
}

export class CircuitBreaker {
  readonly #settings: Required<Omit<BreakerSettings, 'onChange'>> & Pick<BreakerSettings, 'onChange'>;
  #state: 'closed' | 'open' | 'gave_up' = 'closed';
  /** The last SAMPLE outcomes, oldest first: the key of a transient failure, or undefined for an answer. */
  #recent: Array<string | undefined> = [];
  /** The keys of the failures since the last answer. */
  #streak: string[] = [];
  #downSince = 0;
  #downMsBefore = 0;
  #failure: string | undefined;
  #probeDelay: number;
  #probeOut = false;
  #probeDue = false;
  /**
   * Where the patience stands: 'before' its end; 'owed' once it ran out while a probe sent before
   * it was out (one more probe is owed); 'last' once the last probe is sent or due.
   */
  #deadline: 'before' | 'owed' | 'last' = 'before';
  #graceTurn = 0;
  readonly #held: Held[] = [];
  /** Cuts the breaker's own waits (the next probe, the patience) short once it is no longer open. */
  #waits = new AbortController();

  constructor(settings: BreakerSettings) {
    this.#settings = {
      probeMinMs: DEFAULTS.probeMinMs,
      probeMaxMs: DEFAULTS.probeMaxMs,
      ...settings,
    };
    this.#probeDelay = this.#settings.probeMinMs;
  }

  /** Since when the API is down (epoch ms), or undefined while it is up. */
  get unavailableSince(): number | undefined {
    return this.#state === 'closed' ? undefined : this.#downSince;
  }

  /** How long the API has been down in all, the current outage included. */
  get downMs(): number {
    return this.#downMsBefore + (this.#state === 'open' ? this.#settings.clock.now() - this.#downSince : 0);
  }

  /** What the last outage began with (its "The API is unavailable (…)" line says it), if there was one. */
  get failure(): string | undefined {
    return this.#failure;
  }

  get gaveUp(): boolean {
    return this.#state === 'gave_up';
  }

  /**
   * Resolves when an attempt may go: at once while the circuit is closed; while it is open, when
   * this attempt's turn as the probe comes, or when a probe is answered. Rejects with
   * ApiUnavailableError once the API has been given up on; resolves 'closed' when `signal` aborts
   * (the caller's stop decides what then).
   */
  admit(signal?: AbortSignal): Promise<Admission> {
    if (this.#state === 'closed') return Promise.resolve('closed');
    if (this.#state === 'gave_up') return Promise.reject(this.#unavailable());
    if (this.#probeDue && !this.#probeOut) return Promise.resolve(this.#sendProbe());
    return new Promise<Admission>((resolve, reject) => {
      const held: Held = {
        admit: (admission) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(admission);
        },
        refuse: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      const onAbort = () => {
        const at = this.#held.indexOf(held);
        if (at >= 0) this.#held.splice(at, 1);
        resolve('closed');
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#held.push(held);
    });
  }

  /**
   * Checked again when the gate lets the attempt go: a lookup admitted while the circuit was closed
   * may have waited for its slot while it opened. Only the probe goes while the API is down.
   */
  holds(admission: Admission): boolean {
    return this.#state !== 'closed' && admission !== 'probe';
  }

  /**
   * The API answered an attempt (a lead, a miss, or a refusal that is no outage: 400, 401, 402,
   * 429): while open, the circuit closes, which ends the probe too; while closed, no probe is out.
   */
  answered(): void {
    this.#observe(undefined);
    if (this.#state === 'open') this.#close();
  }

  /**
   * The attempt failed with `error`. 'retry': the circuit is closed, the failure is the call's own
   * (retried as any). 'hold': the API is down; the call waits for its turn again, using none of its
   * retries. `alone`: the call is all the run sends (its first account reads), so its failure alone
   * is the API down, unless no wait can mend it (a host that does not exist).
   */
  failed(admission: Admission, error: unknown, key: string, alone = false): 'retry' | 'hold' {
    if (admission === 'probe') this.#probeOut = false;
    if (isOutage(error) && !(alone && isUnknownHost(error))) {
      this.#observe(key);
      if (this.#state === 'closed' && (alone || this.#shouldOpen())) this.#open(error);
      if (this.#state === 'closed') return 'retry';
      if (admission === 'probe' && this.#state === 'open') this.#probeFailed();
      return 'hold';
    }
    if (isAnswer(error)) this.answered();
    // Not the API's doing (the gate stopped, the reserve refused): nothing learned of the API; a
    // probe that was not sent leaves the turn to the next one.
    else if (admission === 'probe' && this.#state === 'open') this.#probeNotSent();
    return 'retry';
  }

  /** An outcome: the key of a transient failure, or undefined for an answer. */
  #observe(failedKey: string | undefined): void {
    this.#recent.push(failedKey);
    if (this.#recent.length > SAMPLE) this.#recent.shift();
    if (failedKey === undefined) this.#streak = [];
    else this.#streak.push(failedKey);
  }

  #shouldOpen(): boolean {
    if (this.#streak.length >= OPEN_AFTER_CONSECUTIVE && manyKeys(this.#streak)) return true;
    if (this.#recent.length < SAMPLE) return false;
    const failures = this.#recent.filter((key): key is string => key !== undefined);
    return failures.length >= FAILED_SHARE * SAMPLE && manyKeys(failures);
  }

  #open(error: unknown): void {
    const { clock, patienceMs, onChange } = this.#settings;
    this.#state = 'open';
    this.#deadline = 'before';
    this.#downSince = clock.now();
    this.#probeDelay = this.#settings.probeMinMs;
    this.#waits = new AbortController();
    this.#failure = describe(error);
    onChange?.({ kind: 'unavailable', since: this.#downSince, failure: this.#failure });
    this.#scheduleProbe();
    const waits = this.#waits.signal;
    void clock.sleep(patienceMs, waits).then(() => {
      if (!waits.aborted && this.#state === 'open') this.#patienceOver();
    });
  }

  /**
   * The patience is over. The API is given up on once a probe sent after the deadline has failed,
   * or has not been answered within a probe's first interval: a probe that left before the deadline
   * says nothing of the API at it. On a slow link (answers taking a quarter of a second) the probes'
   * waits drift, and an outage of one second would be taken for one past a patience of three.
   */
  #patienceOver(): void {
    if (this.#probeOut) {
      this.#deadline = 'owed';
      this.#giveUpUnlessAnswered();
    } else this.#sendLastProbe();
  }

  /** The last probe: the next held lookup, or the next one admitted (the failed probe's own call, back at once). */
  #sendLastProbe(): void {
    this.#deadline = 'last';
    const next = this.#held.shift();
    if (next) next.admit(this.#sendProbe());
    else this.#probeDue = true;
    this.#giveUpUnlessAnswered();
  }

  #giveUpUnlessAnswered(): void {
    const waits = this.#waits.signal;
    const turn = ++this.#graceTurn;
    void this.#settings.clock.sleep(this.#settings.probeMinMs, waits).then(() => {
      if (!waits.aborted && turn === this.#graceTurn && this.#state === 'open') this.#giveUp();
    });
  }

  #scheduleProbe(): void {
    const waits = this.#waits.signal;
    this.#probeDue = false;
    void this.#settings.clock.sleep(this.#probeDelay, waits).then(() => {
      if (waits.aborted || this.#state !== 'open' || this.#probeOut) return;
      const next = this.#held.shift();
      if (next) next.admit(this.#sendProbe());
      else this.#probeDue = true;
    });
  }

  /** The probe was not sent (the gate stopped, the reserve refused): the turn passes on, or, past the patience, the wait ends. */
  #probeNotSent(): void {
    if (this.#deadline === 'before') this.#scheduleProbe();
    else this.#giveUp();
  }

  #sendProbe(): Admission {
    this.#probeOut = true;
    this.#probeDue = false;
    return 'probe';
  }

  #probeFailed(): void {
    if (this.#deadline !== 'before') {
      if (this.#deadline === 'last') this.#giveUp();
      else this.#sendLastProbe();
      return;
    }
    // Half as long again each time (1, 1.5, 2.3, 3.4, 5.1 ... 30 s): few probes in a long outage,
    // and a short one is not outlived by much.
    this.#probeDelay = Math.min(this.#settings.probeMaxMs, this.#probeDelay * PROBE_GROWTH);
    this.#scheduleProbe();
  }

  #close(): void {
    const downMs = this.#settings.clock.now() - this.#downSince;
    this.#leaveOpen();
    this.#state = 'closed';
    this.#recent = [];
    this.#streak = [];
    this.#settings.onChange?.({ kind: 'back', downMs });
    for (const held of this.#held.splice(0)) held.admit('closed');
  }

  #giveUp(): void {
    const downMs = this.#settings.clock.now() - this.#downSince;
    this.#leaveOpen();
    this.#state = 'gave_up';
    this.#settings.onChange?.({ kind: 'gave_up', downMs });
    for (const held of this.#held.splice(0)) held.refuse(this.#unavailable());
  }

  #leaveOpen(): void {
    this.#downMsBefore += this.#settings.clock.now() - this.#downSince;
    this.#waits.abort();
    this.#probeOut = false;
    this.#probeDue = false;
  }

  #unavailable(): ApiUnavailableError {
    return new ApiUnavailableError(`not looked up: the API was unavailable for longer than the patience (${Math.round(this.#settings.patienceMs / 1000)} s)`);
  }
}

/** The API answered, if with a refusal (400, 401, 402, 429, a bad body at some status): it is up. */
function isAnswer(error: unknown): boolean {
  return error instanceof LeadEnrichError && error.status !== undefined;
}

/** Failures of many rows, not one row's retries: MANY_KEYS different keys at least. */
function manyKeys(keys: readonly string[]): boolean {
  return new Set(keys).size >= MANY_KEYS;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

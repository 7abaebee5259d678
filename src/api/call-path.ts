// The way a LeadClient's single calls go out (cli-contract.md, "Library": they "retry what the CLI
// retries" and "share one rate limit paced evenly as in enrich"). Not a second policy: the
// pipeline's own decorators, outermost first:
//   retry (with-retry.ts, retry-policy.ts) → rate gate and its 429 pause (with-gate.ts, rate-gate.ts) → one attempt
// Without a gate, a 429 waits here for the server's pause before the retry sends it again (with a
// gate, the gate holds it). One CallPath per client: its gate is the rate limit all calls share.
import { RateGate, GateStoppedError } from '../lookup/rate/rate-gate.js';
import type { RequestCounters, Send } from '../lookup/request-path/request.js';
import { RetryPolicy, sleep } from '../lookup/request-path/retry-policy.js';
import { withGate } from '../lookup/request-path/with-gate.js';
import { withRetry } from '../lookup/request-path/with-retry.js';
import { DEFAULTS } from '../options/defaults.js';
import type { ClientSettings } from './client-options.js';
import { ClientClosedError, ConfigError, RateLimitedError } from './errors.js';
import { parseServiceLimits } from './limits.js';
import type { ServiceLimits } from './types.js';

export interface CallPathSettings extends Pick<ClientSettings, 'retry' | 'rpm' | 'windowMs'> {
  /** One attempt at /account/limits: sizes `rpm: 'account'`, and tells a paused gate when the window resets. */
  readLimits(): Promise<ServiceLimits>;
}

export class CallPath<Request> {
  readonly #attempt: Send<Request>;
  readonly #settings: CallPathSettings;
  readonly #windowMs: number;
  readonly #retry: RetryPolicy | undefined;
  /** Aborted by close(): retries waiting for their backoff stop, and nothing more is sent. */
  readonly #closing = new AbortController();
  readonly #counters: RequestCounters = { requests: 0, retries: 0, rateLimited: 0 };
  #gate: RateGate | undefined;
  #send: Send<Request> | undefined;
  /** `rpm: 'account'`: the first call reads /account/limits; the others wait for that reading. */
  #sizing: Promise<Send<Request>> | undefined;

  constructor(attempt: Send<Request>, settings: CallPathSettings) {
    const signal = this.#closing.signal;
    // Checked at each attempt: a retry whose backoff close() cut short is not sent (with-retry.ts
    // then reports the failure the call had).
    this.#attempt = (request) => (signal.aborted ? Promise.reject(new GateStoppedError()) : attempt(request));
    this.#settings = settings;
    this.#windowMs = settings.windowMs ?? DEFAULTS.windowMs;
    this.#retry = settings.retry && new RetryPolicy(settings.retry);
    if (settings.rpm === undefined) this.#send = this.#compose(undefined);
    else if (settings.rpm !== 'account') this.#send = this.#compose(this.#openGate(settings.rpm, undefined));
  }

  async send(request: Request): Promise<unknown> {
    if (this.#closing.signal.aborted) throw new ClientClosedError();
    try {
      const send = this.#send ?? (await this.#sizedFromAccount());
      return await send(request);
    } catch (error) {
      // The gate dropped the call (close() while it waited): a LeadError like every other rejection.
      throw error instanceof GateStoppedError ? new ClientClosedError() : error;
    }
  }

  /** Drops the calls waiting for the gate (they reject with ClientClosedError); calls in flight finish. */
  async close(): Promise<void> {
    this.#closing.abort();
    await this.#gate?.stop();
  }

  #compose(gate: RateGate | undefined): Send<Request> {
    const signal = this.#closing.signal;
    const inner = gate ? withGate(this.#attempt, gate, this.#counters, signal) : this.#pauseOn429(this.#attempt);
    return this.#retry ? withRetry(inner, this.#retry, this.#counters, signal) : inner;
  }

  #openGate(rpm: number, limits: ReturnType<typeof parseServiceLimits> | undefined): RateGate {
    this.#gate = new RateGate({
      rpm,
      windowMs: this.#windowMs,
      ...(limits ? { facts: limits } : {}),
      resync: async () => parseServiceLimits(await this.#settings.readLimits()).resetAt,
    });
    return this.#gate;
  }

  #sizedFromAccount(): Promise<Send<Request>> {
    this.#sizing ??= this.#readAccountRate().then(
      (limits) => {
        if (limits.rpm < 1) throw new ConfigError(`The account allows no requests (rate limit ${limits.rpm} RPM): nothing can be sent`);
        if (this.#closing.signal.aborted) throw new ClientClosedError();
        this.#send = this.#compose(this.#openGate(limits.rpm, limits));
        return this.#send;
      },
      (error: unknown) => {
        // A failed reading is the caller's failure, not the client's for good: the next call asks again.
        this.#sizing = undefined;
        throw error;
      },
    );
    return this.#sizing;
  }

  /** /account/limits through the same retry (no gate exists yet to pace it: it is the one that sizes it). */
  async #readAccountRate(): Promise<ReturnType<typeof parseServiceLimits>> {
    const read = this.#pauseOn429(() => this.#settings.readLimits());
    const limits = this.#retry ? await this.#retry.run(() => read(undefined), { signal: this.#closing.signal }) : await read(undefined);
    return parseServiceLimits(limits as ServiceLimits);
  }

  /** Without a gate: a 429 holds this call until the server's pause ends, then the retry sends it again. */
  #pauseOn429<R>(next: Send<R>): Send<R> {
    if (!this.#retry) return next;
    const signal = this.#closing.signal;
    return async (request) => {
      try {
        return await next(request);
      } catch (error) {
        if (error instanceof RateLimitedError) {
          const wait = (error.retryAt?.getTime() ?? 0) - Date.now();
          // No usable hint: a second (the hints' own rounding), never longer than one window.
          await sleep(Math.min(this.#windowMs, Math.max(1000, wait)), signal);
        }
        throw error;
      }
    };
  }
}

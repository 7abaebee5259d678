// The library's client (docs/cli-contract.md, "Library"): the plain ApiClient's typed methods, with
// every call sent down a RequestPath, the same object a run's requests take, so single calls
// "retry what the CLI retries" and "share one rate limit paced evenly as in enrich". A client
// with `retry: false` and no `rpm` makes single attempts, as the ApiClient does.
import { ApiClient, type OperationInput, type OperationOutput } from '../api/client.js';
import { ClientClosedError, ConfigError } from '../api/errors.js';
import { parseServiceLimits, type RateLimitFacts } from '../api/limits.js';
import type { ApiResponse } from '../api/transport.js';
import { Transport } from '../api/transport.js';
import type { Operation, ServiceLimits } from '../api/types.js';
import { DEFAULTS } from '../options/defaults.js';
import { checkClientOptions, type ClientSettings, type LeadClientOptions } from './lead-client-options.js';
import { GateStoppedError } from './rate/rate-gate.js';
import { RequestPath } from './request-path/request-path.js';
import { RetryPolicy } from './request-path/retry-policy.js';

export type { ClientRetryOptions, LeadClientOptions } from './lead-client-options.js';

export class LeadClient extends ApiClient {
  /** The same transport with single, ungated attempts, for a caller with its own retry and gate. */
  readonly #direct: ApiClient;
  readonly #path: RequestPath | undefined;
  readonly #rpm: number | 'account' | undefined;
  /** Aborted by close(): calls waiting for the gate or a backoff stop, and nothing more is sent. */
  readonly #closing = new AbortController();
  /** `rpm: 'account'`: the first call reads /account/limits; the others wait for that reading. */
  #sizing: Promise<void> | undefined;

  /** Over an existing Transport: single, ungated attempts. */
  constructor(options: LeadClientOptions | Transport) {
    const settings = options instanceof Transport ? undefined : checkClientOptions(options);
    super(settings ? settings.transport : (options as Transport));
    this.#direct = new ApiClient(this.transport);
    this.#rpm = settings?.rpm;
    this.#path = settings && (settings.retry || settings.rpm !== undefined) ? this.#pathFor(settings) : undefined;
    if (this.#path && typeof settings?.rpm === 'number') this.#path.openGate({ rpm: settings.rpm, windowMs: settings.windowMs ?? DEFAULTS.windowMs });
  }

  override get direct(): ApiClient {
    return this.#direct;
  }

  override async call<Op extends Operation>(op: Op, input: OperationInput[Op]): Promise<ApiResponse<OperationOutput[Op]>> {
    const path = this.#path;
    if (!path) return this.#direct.call(op, input);
    if (this.#closing.signal.aborted) throw new ClientClosedError();
    try {
      if (this.#rpm === 'account' && !path.gate) await this.#sizedFromAccount(path);
      return (await path.call(op, input)) as ApiResponse<OperationOutput[Op]>;
    } catch (error) {
      // The gate dropped the call (close() while it waited): a LeadError like every other rejection.
      throw error instanceof GateStoppedError ? new ClientClosedError() : error;
    }
  }

  /** Drops the calls waiting for the gate or a backoff (they reject with ClientClosedError) and closes the connections. */
  override async close(): Promise<void> {
    this.#closing.abort();
    await this.#path?.close();
    await super.close();
  }

  #pathFor(settings: ClientSettings): RequestPath {
    const signal = this.#closing.signal;
    // retry: false with a gate: the gate paces the calls, and every failure (a 429 too) surfaces at once.
    const retry = new RetryPolicy(settings.retry ?? { retries: 0, maxRateLimited: 0 });
    // Each call is one attempt of the direct client, checked as it checks them.
    return new RequestPath((op, input) => this.#direct.call(op, input as never), {
      retry,
      windowMs: settings.windowMs ?? DEFAULTS.windowMs,
      noMoreRequests: signal,
      halt: signal,
    });
  }

  /** `rpm: 'account'`: one reading of /account/limits (retried as any call) sizes the gate. */
  #sizedFromAccount(path: RequestPath): Promise<void> {
    this.#sizing ??= path.call('limits', {}).then(
      (response) => {
        const limits: RateLimitFacts = parseServiceLimits(response.data as ServiceLimits);
        if (limits.rpm < 1) throw new ConfigError(`The account allows no requests (rate limit ${limits.rpm} RPM): nothing can be sent`);
        if (this.#closing.signal.aborted) throw new ClientClosedError();
        if (!path.gate) path.openGate({ rpm: limits.rpm, windowMs: path.windowMs, facts: limits });
      },
      (error: unknown) => {
        // A failed reading is the caller's failure, not the client's for good: the next call asks again.
        this.#sizing = undefined;
        throw error;
      },
    );
    return this.#sizing;
  }
}

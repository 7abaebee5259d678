// The connection to Redis shared by every part of the coordinator (docs/reference.md, "Running on several
// machines"), and what happens when it is lost: the first failure marks the link lost, tells the
// run once, and every later command fails with the same error instead of waiting for Redis.
import Bottleneck from 'bottleneck';
import { Redis } from 'ioredis';
import { ConfigError, CoordinationLostError } from '../api/errors.js';

export { CoordinationLostError } from '../api/errors.js';

/** Redacts any password in a redis:// URL for messages. */
function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the --redis URL';
  }
}

export class RedisLink {
  readonly client: Redis;
  /** The same client as Bottleneck's cluster connection, which carries the rate limiter. */
  readonly connection: Bottleneck.IORedisConnection;
  readonly #url: string;
  #lost: CoordinationLostError | undefined;
  readonly #onLost: Array<(error: CoordinationLostError) => void> = [];
  #closing = false;

  private constructor(client: Redis, url: string) {
    this.client = client;
    this.#url = describeUrl(url);
    this.connection = new Bottleneck.IORedisConnection({ client, Redis });
    this.connection.on('error', (error: unknown) => this.fail(error));
    client.on('error', (error: unknown) => this.fail(error));
    client.on('end', () => this.fail(new Error('connection closed')));
  }

  /** Connects and checks Redis answers; ConfigError when the URL is wrong or Redis cannot be reached. */
  static async connect(url: string, connectTimeoutMs = 5000): Promise<RedisLink> {
    let client: Redis;
    try {
      client = new Redis(url, {
        connectTimeout: connectTimeoutMs,
        // Fail fast instead of queueing commands while Redis is away: a lost Redis stops lookups.
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        retryStrategy: () => null,
      });
    } catch (error) {
      throw new ConfigError(`Invalid --redis URL ${describeUrl(url)}: ${(error as Error).message}`);
    }
    client.on('error', () => {});
    try {
      // Not lazy: Bottleneck duplicates this client for its subscriptions, and a lazy duplicate
      // would never connect.
      await new Promise<void>((resolve, reject) => {
        client.once('ready', () => resolve());
        client.once('error', reject);
        client.once('end', () => reject(new Error('connection closed')));
      });
      await client.ping();
    } catch (error) {
      client.disconnect();
      throw new ConfigError(
        `Cannot reach Redis at ${describeUrl(url)}: ${(error as Error).message}; start it, fix --redis / LEAD_ENRICH_REDIS, or drop --redis to run alone`,
      );
    }
    return new RedisLink(client, url);
  }

  get lost(): CoordinationLostError | undefined {
    return this.#lost;
  }

  onLost(listener: (error: CoordinationLostError) => void): void {
    this.#onLost.push(listener);
  }

  /** Marks Redis as gone (once) and tells the run. */
  fail(cause: unknown): CoordinationLostError {
    if (!this.#lost && !this.#closing) {
      this.#lost = new CoordinationLostError(
        `Lost the connection to Redis at ${this.#url}: no new lookups; what is done is written. Run the same command again when Redis is back`,
        cause,
      );
      for (const listener of this.#onLost) listener(this.#lost);
    }
    return this.#lost ?? new CoordinationLostError('Redis connection closed', cause);
  }

  /** Runs a Redis command; any failure marks the link lost, and a lost link runs nothing. */
  async call<T>(command: () => Promise<T>): Promise<T> {
    if (this.#lost) throw this.#lost;
    try {
      return await command();
    } catch (error) {
      throw this.fail(error);
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    try {
      await this.connection.disconnect(false);
    } catch {
      // already gone
    }
    this.client.disconnect();
  }
}

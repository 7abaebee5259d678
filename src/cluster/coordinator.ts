// Several workers, one account (README, "Running on several machines"): the state that must be
// shared lives in Redis, under keys derived from the service and a hash of the token (never the
// token itself). Bottleneck's own clustering carries the rate limiter; this file holds the rest:
// the credit reserve, claims on keys in flight, answers shared between workers, and the
// window-edge refill lock and pause that keep the shared reservoir in step with the server.
import { createHash, randomUUID } from 'node:crypto';
import Bottleneck from 'bottleneck';
import { Redis } from 'ioredis';
import { ConfigError, LeadEnrichError } from '../api/errors.js';

/** Redis went away during a run: lookups stop, what is done is written. */
export class CoordinationLostError extends LeadEnrichError {
  constructor(message: string, cause?: unknown) {
    super('redis_unavailable', message, cause === undefined ? {} : { cause });
  }
}

export interface CoordinatorOptions {
  url: string;
  service: string;
  /** A hash of the token (Transport.tokenFingerprint): the token itself never reaches Redis. */
  tokenFingerprint: string;
  /** How long a claim on a key in flight holds before another worker may take it over. */
  claimTtlMs?: number;
  /** How long answers stay shared in Redis (the durable store keeps them longer). */
  answerTtlMs?: number;
  /** How long a worker's credits in flight outlive its last reservation or settlement (see INFLIGHT_TTL_MS). */
  inflightTtlMs?: number;
  connectTimeoutMs?: number;
}

export interface SharedAnswer {
  found: boolean;
  data: unknown;
  fetchedAt: number;
}

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

// Credits reserved by requests in flight, summed over the living workers. Each worker's share is
// a key of its own (KEYS[2]:<worker id>) renewed by its every reservation and settlement: a killed
// worker's share expires with its key instead of being held back from the others for ever.
const INFLIGHT = `
local function inflight(workers)
  local total = 0
  for _, w in ipairs(redis.call('SMEMBERS', workers)) do
    local v = redis.call('GET', workers .. ':' .. w)
    if v then total = total + tonumber(v) else redis.call('SREM', workers, w) end
  end
  return total
end
`;

const TRY_BEGIN = `${INFLIGHT}
local h = KEYS[1]
if redis.call('HGET', h, 'exhausted') == '1' then return 0 end
local b = tonumber(redis.call('HGET', h, 'balance') or '0')
local s = tonumber(redis.call('HGET', h, 'spent') or '0')
if b - s - inflight(KEYS[2]) - tonumber(ARGV[1]) < tonumber(ARGV[2]) then return 0 end
local mine = KEYS[2] .. ':' .. ARGV[4]
redis.call('INCRBY', mine, ARGV[1])
redis.call('PEXPIRE', mine, ARGV[5])
redis.call('SADD', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', h, ARGV[3])
return 1`;

const SETTLE = `
local mine = KEYS[2] .. ':' .. ARGV[2]
-- A share that expired while its request ran (longer than the expiry) is not made negative.
if redis.call('EXISTS', mine) == 1 then
  redis.call('DECRBY', mine, ARGV[1])
  redis.call('PEXPIRE', mine, ARGV[3])
end
if ARGV[4] == '1' then redis.call('HINCRBY', KEYS[1], 'spent', ARGV[1]) end
return 1`;

const READING = `${INFLIGHT}
local h = KEYS[1]
local reading = tonumber(ARGV[1])
local b = redis.call('HGET', h, 'balance')
local idle = inflight(KEYS[2]) <= 0
if b and ARGV[4] == 'start' and idle and redis.call('HGET', h, 'exhausted') == '1' and reading > tonumber(ARGV[2]) then
  -- A new run after a stop at the reserve, with credits added since: start afresh.
  redis.call('HSET', h, 'exhausted', '0')
elseif b then
  local estimate = tonumber(b) - tonumber(redis.call('HGET', h, 'spent') or '0')
  if estimate < reading then reading = estimate end
elseif reading > tonumber(ARGV[2]) then
  redis.call('HSET', h, 'exhausted', '0')
end
redis.call('HSET', h, 'balance', reading, 'spent', 0)
redis.call('PEXPIRE', h, ARGV[3])
return reading`;

const REFILL_TURN = `
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. now)
redis.call('PEXPIRE', KEYS[2], ttl)
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl, 'NX') then return -1 end
local longest = 0
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do
  local delay, at = string.match(all[i + 1], '^(%d+):(%d+)$')
  if delay and now - tonumber(at) <= ttl then
    if tonumber(delay) > longest then longest = tonumber(delay) end
  else
    redis.call('HDEL', KEYS[2], all[i])
  end
end
return longest`;

const COUNT_OUTSIDE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('INCRBY', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`;

// KEYS: Bottleneck's settings hash (its own naming: b_<id>_settings), the edge's refilled
// mark, the edge's outside count, the latest edge refilled. Time is Redis's, as in
// Bottleneck's own scripts.
const REFILL = `
redis.replicate_commands()
local latest = tonumber(redis.call('GET', KEYS[4]) or '0')
if tonumber(ARGV[4]) < latest then return -2 end
redis.call('SET', KEYS[4], ARGV[4], 'PX', 24 * 60 * 60 * 1000)
redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nextRequest = tonumber(redis.call('HGET', KEYS[1], 'nextRequest') or '0') or 0
local waiting = math.ceil(math.max(0, nextRequest - now) / tonumber(ARGV[2]))
local outside = tonumber(redis.call('GET', KEYS[3]) or '0')
local reservoir = math.max(0, tonumber(ARGV[1]) - outside - waiting)
redis.call('HSET', KEYS[1], 'reservoir', reservoir)
return reservoir`;

/** The shared credit estimate is forgotten an hour after its last use. */
const CREDITS_TTL_MS = 60 * 60 * 1000;
/**
 * A worker's share of the credits in flight outlives its last reservation or settlement by this
 * long: more than the longest request (a Whois may take 110 s on the server), so a living worker's
 * share never lapses, and a killed worker's is released within minutes.
 */
const INFLIGHT_TTL_MS = 5 * 60 * 1000;

export class Coordinator {
  readonly id: string;
  readonly client: Redis;
  readonly connection: Bottleneck.IORedisConnection;
  readonly workerId = randomUUID();
  readonly #claimTtlMs: number;
  readonly #answerTtlMs: number;
  readonly #inflightTtlMs: number;
  #lost: CoordinationLostError | undefined;
  readonly #onLost: Array<(error: CoordinationLostError) => void> = [];
  readonly #url: string;

  private constructor(client: Redis, options: CoordinatorOptions) {
    this.client = client;
    this.#url = describeUrl(options.url);
    // One cluster per account and service: a hash of the token names it, never the token.
    this.id = `lead-enrich:${createHash('sha256').update(`${options.service}\u0000${options.tokenFingerprint}`).digest('hex').slice(0, 20)}`;
    this.#claimTtlMs = options.claimTtlMs ?? 60_000;
    this.#answerTtlMs = options.answerTtlMs ?? 24 * 60 * 60 * 1000;
    this.#inflightTtlMs = options.inflightTtlMs ?? INFLIGHT_TTL_MS;
    this.connection = new Bottleneck.IORedisConnection({ client, Redis });
    this.connection.on('error', (error: unknown) => this.fail(error));
    client.on('error', (error: unknown) => this.fail(error));
    client.on('end', () => this.fail(new Error('connection closed')));
  }

  static async connect(options: CoordinatorOptions): Promise<Coordinator> {
    let client: Redis;
    try {
      client = new Redis(options.url, {
        connectTimeout: options.connectTimeoutMs ?? 5000,
        // Fail fast instead of queueing commands while Redis is away: a lost Redis stops lookups.
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        retryStrategy: () => null,
      });
    } catch (error) {
      throw new ConfigError(`Invalid --redis URL ${describeUrl(options.url)}: ${(error as Error).message}`);
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
        `Cannot reach Redis at ${describeUrl(options.url)}: ${(error as Error).message}; start it, fix --redis / LEAD_ENRICH_REDIS, or drop --redis to run alone`,
      );
    }
    return new Coordinator(client, options);
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

  async #call<T>(command: () => Promise<T>): Promise<T> {
    if (this.#lost) throw this.#lost;
    try {
      return await command();
    } catch (error) {
      throw this.fail(error);
    }
  }

  // --- rate: one refill per window edge, and a pause every worker sees -----------------------

  /**
   * Every worker calls this at each window edge with its own delay between a grant and a
   * request's arrival (latency, event-loop stalls). Exactly one worker per edge gets the turn to
   * refill the shared reservoir: it gets the longest delay any live worker reported in the last
   * two windows; the others get undefined.
   */
  async refillTurn(edge: number, windowMs: number, delayMs: number): Promise<number | undefined> {
    const result = await this.#call(() =>
      this.client.eval(REFILL_TURN, 2, `${this.id}:refill:${edge}`, `${this.id}:delays`, this.workerId, String(Math.ceil(delayMs)), String(Math.max(1000, windowMs * 2))),
    );
    return result === -1 ? undefined : Number(result);
  }

  /**
   * Requests a worker made outside the limiter in the window starting at `edge`, kept for that
   * window's refill unless it already happened (refillReservoir).
   */
  async countOutside(edge: number, n: number, windowMs: number): Promise<void> {
    await this.#call(() => this.client.eval(COUNT_OUTSIDE, 2, `${this.id}:refilled:${edge}`, `${this.id}:outside:${edge}`, String(n), String(Math.max(1000, windowMs * 2))));
  }

  /**
   * Refills the shared reservoir for the window starting at `edge`, in one step in Redis: what
   * the window allows (`allowance`), less what workers spent outside the limiter in it
   * (countOutside), less the grants already made that are still waiting for their start.
   * Bottleneck takes a job's place in the reservoir when it grants it, and a grant may wait for
   * its turn at the pace well past the edge: those starts fall in the new window. Returns the
   * new reservoir; undefined when the limiter's settings are not in Redis (yet); 'late' when a
   * later window was refilled already (this worker was held up), and nothing was changed.
   */
  async refillReservoir(edge: number, windowMs: number, allowance: number, minTimeMs: number): Promise<number | 'late' | undefined> {
    const result = await this.#call(() =>
      this.client.eval(
        REFILL,
        4,
        `b_${this.id}_settings`,
        `${this.id}:refilled:${edge}`,
        `${this.id}:outside:${edge}`,
        `${this.id}:last-refilled-edge`,
        String(allowance),
        String(minTimeMs),
        String(Math.max(1000, windowMs * 2)),
        String(edge),
      ),
    );
    if (result === -2) return 'late';
    return result === -1 ? undefined : Number(result);
  }

  async pauseUntil(until: number): Promise<void> {
    await this.#call(async () => {
      const current = Number((await this.client.get(`${this.id}:paused-until`)) ?? 0);
      if (until > current) await this.client.set(`${this.id}:paused-until`, String(until), 'PX', Math.max(1000, until - Date.now() + 60_000));
    });
  }

  async pausedUntil(): Promise<number> {
    return Number((await this.#call(() => this.client.get(`${this.id}:paused-until`))) ?? 0);
  }

  // --- credits: one estimate for every worker ---------------------------------------------------

  get #credits(): string {
    return `${this.id}:credits`;
  }

  /**
   * A fresh balance from /account/credits. Another worker may have spent since this reading
   * was taken, so the shared estimate only ever goes down by a reading (the lower of the two
   * wins); a new estimate starts from it. Redis holds it for an hour after the last use.
   */
  get #inflight(): string {
    return `${this.id}:inflight`;
  }

  async creditReading(balance: number, reserve: number, atStart = false): Promise<void> {
    await this.#call(() =>
      this.client.eval(READING, 2, this.#credits, this.#inflight, String(balance), String(reserve), String(CREDITS_TTL_MS), atStart ? 'start' : 'during'),
    );
  }

  async tryReserve(cost: number, reserve: number): Promise<boolean> {
    const ok = await this.#call(() =>
      this.client.eval(TRY_BEGIN, 2, this.#credits, this.#inflight, String(cost), String(reserve), String(CREDITS_TTL_MS), this.workerId, String(this.#inflightTtlMs)),
    );
    return ok === 1;
  }

  async settle(cost: number, charged: boolean): Promise<void> {
    await this.#call(() =>
      this.client.eval(SETTLE, 2, this.#credits, this.#inflight, String(cost), this.workerId, String(this.#inflightTtlMs), charged ? '1' : '0'),
    );
  }

  async markExhausted(): Promise<void> {
    await this.#call(() => this.client.hset(this.#credits, 'exhausted', '1'));
  }

  async sharedBalance(): Promise<number | undefined> {
    const [balance, spent] = await this.#call(() => this.client.hmget(this.#credits, 'balance', 'spent'));
    return balance === null ? undefined : Number(balance) - Number(spent ?? 0);
  }

  // --- answers: a key is fetched by one worker, and its answer shared -------------------------

  #answerKey(op: string, key: string): string {
    return `${this.id}:answer:${op}:${createHash('sha1').update(key).digest('hex')}`;
  }
  #claimKey(op: string, key: string): string {
    return `${this.id}:claim:${op}:${createHash('sha1').update(key).digest('hex')}`;
  }

  /** The answer another worker fetched for the key, with when it was fetched (epoch ms, its clock). */
  async sharedAnswer(op: string, key: string): Promise<SharedAnswer | undefined> {
    const text = await this.#call(() => this.client.get(this.#answerKey(op, key)));
    if (text === null) return undefined;
    const answer = JSON.parse(text) as Partial<SharedAnswer>;
    // An answer without a date (published by an older version) counts as fetched long ago.
    return { found: answer.found === true, data: answer.data, fetchedAt: typeof answer.fetchedAt === 'number' ? answer.fetchedAt : 0 };
  }

  /** True when this worker may fetch the key; false while another worker holds it. */
  async claim(op: string, key: string): Promise<boolean> {
    const won = await this.#call(() => this.client.set(this.#claimKey(op, key), this.workerId, 'PX', this.#claimTtlMs, 'NX'));
    return won === 'OK';
  }

  async publishAnswer(op: string, key: string, answer: SharedAnswer): Promise<void> {
    await this.#call(() =>
      this.client.multi().set(this.#answerKey(op, key), JSON.stringify(answer), 'PX', this.#answerTtlMs).del(this.#claimKey(op, key)).exec(),
    );
  }

  async release(op: string, key: string): Promise<void> {
    await this.#call(() => this.client.del(this.#claimKey(op, key)));
  }

  #closing = false;

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

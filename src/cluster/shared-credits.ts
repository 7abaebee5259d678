// The credit reserve shared by every worker of an account (docs/reference.md, "Running on several machines"):
// one estimate of the balance in Redis, checked and reserved atomically by Lua scripts, so the
// reserve holds whatever the number of workers. Used through SharedCreditGuard (pipeline/credits.ts).
import type { RedisLink } from './redis-link.js';

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

/** The shared credit estimate is forgotten an hour after its last use. */
const CREDITS_TTL_MS = 60 * 60 * 1000;
/**
 * A worker's share of the credits in flight outlives its last reservation or settlement by this
 * long: more than the longest request (a Whois may take 110 s on the server), so a living worker's
 * share never lapses, and a killed worker's is released within minutes.
 */
const INFLIGHT_TTL_MS = 5 * 60 * 1000;

export class SharedCredits {
  readonly #link: RedisLink;
  readonly #workerId: string;
  readonly #inflightTtlMs: number;
  /** The estimate: balance, spent since the reading, and whether a worker stopped at the reserve. */
  readonly #credits: string;
  /** The set of workers with credits in flight; each one's share is `<this key>:<worker id>`. */
  readonly #inflight: string;

  constructor(link: RedisLink, clusterId: string, workerId: string, inflightTtlMs = INFLIGHT_TTL_MS) {
    this.#link = link;
    this.#workerId = workerId;
    this.#inflightTtlMs = inflightTtlMs;
    this.#credits = `${clusterId}:credits`;
    this.#inflight = `${clusterId}:inflight`;
  }

  /**
   * A fresh balance from /account/credits. Another worker may have spent since this reading
   * was taken, so the shared estimate only ever goes down by a reading (the lower of the two
   * wins); a new estimate starts from it. Redis holds it for an hour after the last use.
   */
  async creditReading(balance: number, reserve: number, atStart = false): Promise<void> {
    await this.#link.call(() =>
      this.#link.client.eval(READING, 2, this.#credits, this.#inflight, String(balance), String(reserve), String(CREDITS_TTL_MS), atStart ? 'start' : 'during'),
    );
  }

  async tryReserve(cost: number, reserve: number): Promise<boolean> {
    const ok = await this.#link.call(() =>
      this.#link.client.eval(
        TRY_BEGIN,
        2,
        this.#credits,
        this.#inflight,
        String(cost),
        String(reserve),
        String(CREDITS_TTL_MS),
        this.#workerId,
        String(this.#inflightTtlMs),
      ),
    );
    return ok === 1;
  }

  async settle(cost: number, charged: boolean): Promise<void> {
    await this.#link.call(() =>
      this.#link.client.eval(SETTLE, 2, this.#credits, this.#inflight, String(cost), this.#workerId, String(this.#inflightTtlMs), charged ? '1' : '0'),
    );
  }

  async markExhausted(): Promise<void> {
    await this.#link.call(() => this.#link.client.hset(this.#credits, 'exhausted', '1'));
  }

  async sharedBalance(): Promise<number | undefined> {
    const [balance, spent] = await this.#link.call(() => this.#link.client.hmget(this.#credits, 'balance', 'spent'));
    return balance === null ? undefined : Number(balance) - Number(spent ?? 0);
  }
}

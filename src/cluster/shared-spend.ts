// The ledger and the day and month budgets shared by every worker on one Redis (docs/cli-contract.md,
// "Spending over days and months"): the credits charged per UTC day and month, a record per
// charged call, the most one call of each operation was charged, and the credits each worker's
// calls in flight hold, checked and reserved atomically by Lua scripts as the credit reserve is
// (shared-credits.ts). The cluster is of one service and account (coordinator.ts): its budgets
// count that service's spend only.
//
// A worker says it is alive by a key of its own that expires unless its reservations and
// settlements renew it: expiry by Redis's clock, the one clock every worker shares. A worker whose
// key expired (killed, frozen, its machine gone) is gone; its holds, which the service may have
// charged (their answers were lost), are then counted as spent at what they held, dated when they
// were made, by the next script that reads the holds: they never vanish. If that worker was only
// frozen and settles later, its real charge replaces the estimate.
import { DAY_MS, periodAt, type Period, type PeriodLimit } from '../core/budget-periods.js';
import type { Charge, HoldRefusal } from '../store/store-spend.js';
import type { RedisLink } from './redis-link.js';

// KEYS: 1 credits per day (hash: YYYY-MM-DD), 2 per month (hash: YYYY-MM), 3 the workers holding
// credits (set), 4 the prefix of each worker's holds (hash: seq -> "credits:made_at:day:month:op")
// and of its lapsed holds (`:lapsed:` worker), 5 the prefix of each day's records (list), 6 the
// prefix of each worker's alive key, 7 the most per operation (hash). ARGV[1]: the records' ttl.
const SWEEP = `
local function parse(v)
  local credits, made, day, month, op = string.match(v, '^(%d+):(%d+):([^:]+):([^:]+):(.*)$')
  return tonumber(credits), tonumber(made), day, month, op
end
local function count(day, month, credits, record)
  redis.call('HINCRBY', KEYS[1], day, credits)
  redis.call('HINCRBY', KEYS[2], month, credits)
  local log = KEYS[5] .. ':' .. day
  redis.call('RPUSH', log, record)
  redis.call('PEXPIRE', log, ARGV[1])
end
local function lapse(w)
  local holds = KEYS[4] .. ':' .. w
  local lapsed = KEYS[4] .. ':lapsed:' .. w
  local values = redis.call('HGETALL', holds)
  for i = 1, #values, 2 do
    local credits, made, day, month, op = parse(values[i + 1])
    if credits then
      count(day, month, credits, cjson.encode({made_at = made, op = op, credits = credits, worker = w, lapsed = true}))
      redis.call('HSET', lapsed, values[i], values[i + 1])
      redis.call('PEXPIRE', lapsed, 86400000)
    end
  end
  redis.call('DEL', holds)
  redis.call('SREM', KEYS[3], w)
end
local function sweep()
  for _, w in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    if redis.call('PTTL', KEYS[6] .. ':' .. w) < 0 then lapse(w)
    elseif redis.call('EXISTS', KEYS[4] .. ':' .. w) == 0 then redis.call('SREM', KEYS[3], w) end
  end
end
local function held(from, to, me)
  local total, soonest = 0, -1
  for _, w in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    local ttl = redis.call('PTTL', KEYS[6] .. ':' .. w)
    for _, v in ipairs(redis.call('HVALS', KEYS[4] .. ':' .. w)) do
      local credits, made = parse(v)
      if credits and made >= from and made < to then
        total = total + credits
        if w ~= me and (soonest < 0 or ttl < soonest) then soonest = ttl end
      end
    end
  end
  return total, soonest
end
sweep()
`;

// ARGV: records' ttl, cost, worker, seq, made_at, alive ttl, day, month, op, then per budget: per, key, credits, from, to.
// Returns {0} when held, else {the refused budget's index (1-based), spent, held, ms until the soonest holder lapses (-1: none)}.
const RESERVE = `${SWEEP}
local cost = tonumber(ARGV[2])
local best, room, least = nil, nil, nil
for i = 10, #ARGV, 5 do
  local spent = tonumber(redis.call('HGET', ARGV[i] == 'day' and KEYS[1] or KEYS[2], ARGV[i + 1]) or '0')
  local h, soonest = held(tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4]), ARGV[3])
  local left = tonumber(ARGV[i + 2]) - spent - h
  if cost > left and (room == nil or left < room) then best, room = {(i - 5) / 5, spent, h, soonest}, left end
  if least == nil or left < least then least = left end
end
if best then return best end
local hold = cost
if least ~= nil and least - cost < cost then hold = least end
redis.call('HSET', KEYS[4] .. ':' .. ARGV[3], ARGV[4], hold .. ':' .. ARGV[5] .. ':' .. ARGV[7] .. ':' .. ARGV[8] .. ':' .. ARGV[9])
redis.call('SET', KEYS[6] .. ':' .. ARGV[3], '1', 'PX', ARGV[6])
redis.call('SADD', KEYS[3], ARGV[3])
return {0}`;

// ARGV: records' ttl, worker, seq ('' for none), credits, day, month, record, alive ttl, op.
const SETTLE = `${SWEEP}
local w = ARGV[2]
if ARGV[3] ~= '' and redis.call('HDEL', KEYS[4] .. ':' .. w, ARGV[3]) == 0 then
  local lapsed = KEYS[4] .. ':lapsed:' .. w
  local v = redis.call('HGET', lapsed, ARGV[3])
  if v then
    local credits, made, day, month = parse(v)
    -- This worker was taken for gone and its hold counted as spent: its own charge (below) replaces that.
    redis.call('HINCRBY', KEYS[1], day, -credits)
    redis.call('HINCRBY', KEYS[2], month, -credits)
    redis.call('HDEL', lapsed, ARGV[3])
  end
end
redis.call('SET', KEYS[6] .. ':' .. w, '1', 'PX', ARGV[8])
local credits = tonumber(ARGV[4])
if credits > 0 then
  count(ARGV[5], ARGV[6], credits, ARGV[7])
  if credits > tonumber(redis.call('HGET', KEYS[7], ARGV[9]) or '0') then redis.call('HSET', KEYS[7], ARGV[9], credits) end
end
return 1`;

// ARGV: records' ttl, per, key, from, to.
const STANDING = `${SWEEP}
local spent = tonumber(redis.call('HGET', ARGV[2] == 'day' and KEYS[1] or KEYS[2], ARGV[3]) or '0')
local h = held(tonumber(ARGV[4]), tonumber(ARGV[5]), '')
return {spent, h}`;

/** A worker's alive key outlives its last reservation or settlement by this long: more than the longest call (see shared-credits.ts). */
const HOLD_TTL_MS = 5 * 60 * 1000;
/** The records of each charged call are kept this long (the totals per day and month for good). */
const RECORD_TTL_MS = 400 * DAY_MS;

export class SharedSpend {
  readonly #link: RedisLink;
  readonly #workerId: string;
  readonly #keys: string[];
  readonly #aliveMs: number;
  #seq = 0;

  constructor(link: RedisLink, clusterId: string, workerId: string, aliveMs = HOLD_TTL_MS) {
    this.#link = link;
    this.#workerId = workerId;
    this.#aliveMs = aliveMs;
    const prefix = `${clusterId}:spend`;
    this.#keys = [`${prefix}:days`, `${prefix}:months`, `${prefix}:holders`, `${prefix}:held`, `${prefix}:log`, `${prefix}:alive`, `${prefix}:most`];
  }

  #eval(script: string, args: Array<string | number>): Promise<unknown> {
    return this.#link.call(() => this.#link.client.eval(script, this.#keys.length, ...this.#keys, String(RECORD_TTL_MS), ...args.map(String)));
  }

  async reserve(op: string, cost: number, limits: readonly PeriodLimit[], at: number): Promise<{ seq: number } | HoldRefusal> {
    const seq = ++this.#seq;
    const periods = limits.map((limit) => periodAt(limit.per, at));
    const day = periodAt('day', at).key;
    const budgets = limits.flatMap((limit, i) => [limit.per, periods[i]!.key, limit.credits, periods[i]!.start, periods[i]!.end]);
    const [index, spent, held, soonest] = (await this.#eval(RESERVE, [
      cost,
      this.#workerId,
      seq,
      at,
      this.#aliveMs,
      day,
      day.slice(0, 7),
      op,
      ...budgets,
    ])) as number[];
    if (!index) return { seq };
    return { refused: limits[index - 1]!, period: periods[index - 1]!, spent: spent!, held: held!, ...(soonest! >= 0 ? { lapseInMs: soonest } : {}) };
  }

  async settle(seq: number | undefined, charge: Charge | undefined): Promise<void> {
    const day = charge ? periodAt('day', charge.at).key : '';
    const record = charge ? JSON.stringify({ at: new Date(charge.at).toISOString(), op: charge.op, credits: charge.credits, run: charge.runId }) : '';
    await this.#eval(SETTLE, [
      this.#workerId,
      seq === undefined ? '' : seq,
      charge?.credits ?? 0,
      day,
      day.slice(0, 7),
      record,
      this.#aliveMs,
      charge?.op ?? '',
    ]);
  }

  async standing(period: Period): Promise<{ spent: number; held: number }> {
    const [spent, held] = (await this.#eval(STANDING, [period.per, period.key, period.start, period.end])) as number[];
    return { spent: spent!, held: held! };
  }

  /** The most one call of each operation was charged, as Redis remembers it. */
  async mostCharged(): Promise<Map<string, number>> {
    const most = (await this.#link.call(() => this.#link.client.hgetall(this.#keys[6]!))) as Record<string, string>;
    return new Map(Object.entries(most).map(([op, credits]) => [op, Number(credits)]));
  }
}

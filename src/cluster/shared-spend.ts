// The ledger and the day and month budgets shared by every worker on one Redis (docs/cli-contract.md,
// "Spending over days and months"): the credits charged per UTC day and month, a record per
// charged call, and the credits each worker's calls in flight hold, checked and reserved
// atomically by Lua scripts as the credit reserve is (shared-credits.ts). Each worker's holds are
// a hash of their own, renewed by its every reservation and settlement: a killed worker's holds
// expire with their key.
import { DAY_MS, periodAt, type Period, type PeriodLimit } from '../core/budget-periods.js';
import type { Charge, HoldRefusal } from '../store/store-spend.js';
import type { RedisLink } from './redis-link.js';

// KEYS: 1 credits per day (hash: YYYY-MM-DD), 2 per month (hash: YYYY-MM), 3 the workers holding
// credits (set), 4 the prefix of each worker's holds (hash: seq -> "credits:made_at").
const HELD = `
local function held(from, to)
  local total = 0
  for _, w in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    local holds = redis.call('HVALS', KEYS[4] .. ':' .. w)
    if #holds == 0 then redis.call('SREM', KEYS[3], w) end
    for _, v in ipairs(holds) do
      local sep = string.find(v, ':', 1, true)
      local made = tonumber(string.sub(v, sep + 1))
      if made >= from and made < to then total = total + tonumber(string.sub(v, 1, sep - 1)) end
    end
  end
  return total
end
`;

// ARGV: cost, worker, seq, made_at, ttl, then per budget: per, key, credits, from, to.
// Returns {0} when held, else {the refused budget's index (1-based), spent, held}: the one with the least room.
const RESERVE = `${HELD}
local cost = tonumber(ARGV[1])
local best, room = nil, nil
for i = 6, #ARGV, 5 do
  local spent = tonumber(redis.call('HGET', ARGV[i] == 'day' and KEYS[1] or KEYS[2], ARGV[i + 1]) or '0')
  local h = held(tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4]))
  local left = tonumber(ARGV[i + 2]) - spent - h
  if cost > left and (room == nil or left < room) then best, room = {(i - 1) / 5, spent, h}, left end
end
if best then return best end
local mine = KEYS[4] .. ':' .. ARGV[2]
redis.call('HSET', mine, ARGV[3], ARGV[1] .. ':' .. ARGV[4])
redis.call('PEXPIRE', mine, ARGV[5])
redis.call('SADD', KEYS[3], ARGV[2])
return {0}`;

// KEYS as above, 5 the prefix of each day's records (list). ARGV: worker, seq ('' for none),
// credits, day, month, record, ttl, the records' ttl.
const SETTLE = `
local mine = KEYS[4] .. ':' .. ARGV[1]
if ARGV[2] ~= '' then redis.call('HDEL', mine, ARGV[2]) end
if redis.call('EXISTS', mine) == 1 then redis.call('PEXPIRE', mine, ARGV[7]) end
local credits = tonumber(ARGV[3])
if credits > 0 then
  redis.call('HINCRBY', KEYS[1], ARGV[4], credits)
  redis.call('HINCRBY', KEYS[2], ARGV[5], credits)
  local log = KEYS[5] .. ':' .. ARGV[4]
  redis.call('RPUSH', log, ARGV[6])
  redis.call('PEXPIRE', log, ARGV[8])
end
return 1`;

const STANDING = `${HELD}
local spent = tonumber(redis.call('HGET', ARGV[1] == 'day' and KEYS[1] or KEYS[2], ARGV[2]) or '0')
return {spent, held(tonumber(ARGV[3]), tonumber(ARGV[4]))}`;

/** A worker's holds outlive its last reservation or settlement by this long: more than the longest call (see shared-credits.ts). */
const HOLD_TTL_MS = 5 * 60 * 1000;
/** The records of each charged call are kept this long (the totals per day and month for good). */
const RECORD_TTL_MS = 400 * DAY_MS;

export class SharedSpend {
  readonly #link: RedisLink;
  readonly #workerId: string;
  readonly #keys: string[];
  #seq = 0;

  constructor(link: RedisLink, clusterId: string, workerId: string) {
    this.#link = link;
    this.#workerId = workerId;
    const prefix = `${clusterId}:spend`;
    this.#keys = [`${prefix}:days`, `${prefix}:months`, `${prefix}:holders`, `${prefix}:held`, `${prefix}:log`];
  }

  async reserve(cost: number, limits: readonly PeriodLimit[], at: number): Promise<{ seq: number } | HoldRefusal> {
    const seq = ++this.#seq;
    const periods = limits.map((limit) => periodAt(limit.per, at));
    const args = limits.flatMap((limit, i) => [limit.per, periods[i]!.key, limit.credits, periods[i]!.start, periods[i]!.end].map(String));
    const [index, spent, held] = (await this.#link.call(() =>
      this.#link.client.eval(RESERVE, 4, ...this.#keys.slice(0, 4), String(cost), this.#workerId, String(seq), String(at), String(HOLD_TTL_MS), ...args),
    )) as number[];
    if (!index) return { seq };
    return { refused: limits[index - 1]!, period: periods[index - 1]!, spent: spent!, held: held! };
  }

  async settle(seq: number | undefined, charge: Charge | undefined): Promise<void> {
    const day = charge ? periodAt('day', charge.at).key : '';
    const month = day.slice(0, 7);
    const record = charge ? JSON.stringify({ at: new Date(charge.at).toISOString(), op: charge.op, credits: charge.credits, run: charge.runId }) : '';
    await this.#link.call(() =>
      this.#link.client.eval(SETTLE, 5, ...this.#keys, this.#workerId, seq === undefined ? '' : String(seq), String(charge?.credits ?? 0), day, month, record, String(HOLD_TTL_MS), String(RECORD_TTL_MS)),
    );
  }

  async standing(period: Period): Promise<{ spent: number; held: number }> {
    const [spent, held] = (await this.#link.call(() =>
      this.#link.client.eval(STANDING, 4, ...this.#keys.slice(0, 4), period.per, period.key, String(period.start), String(period.end)),
    )) as number[];
    return { spent: spent!, held: held! };
  }
}

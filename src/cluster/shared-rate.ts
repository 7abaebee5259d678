// What the cluster's rate limit needs beside Bottleneck's own clustering (docs/reference.md, "Running on
// several machines"): one refill of the shared reservoir per window edge, by one worker, sized
// from what every worker saw; requests made outside the limiter counted against their window;
// and a 429 pause every worker sees.
import type { RedisLink } from './redis-link.js';

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

export class SharedRate {
  readonly #link: RedisLink;
  /** Also Bottleneck's limiter id: its settings hash is b_<clusterId>_settings. */
  readonly #clusterId: string;
  readonly #workerId: string;

  constructor(link: RedisLink, clusterId: string, workerId: string) {
    this.#link = link;
    this.#clusterId = clusterId;
    this.#workerId = workerId;
  }

  /**
   * Every worker calls this at each window edge with its own delay between a grant and a
   * request's arrival (latency, event-loop stalls). Exactly one worker per edge gets the turn to
   * refill the shared reservoir: it gets the longest delay any live worker reported in the last
   * two windows; the others get undefined.
   */
  async refillTurn(edge: number, windowMs: number, delayMs: number): Promise<number | undefined> {
    const id = this.#clusterId;
    const result = await this.#link.call(() =>
      this.#link.client.eval(
        REFILL_TURN,
        2,
        `${id}:refill:${edge}`,
        `${id}:delays`,
        this.#workerId,
        String(Math.ceil(delayMs)),
        String(Math.max(1000, windowMs * 2)),
      ),
    );
    return result === -1 ? undefined : Number(result);
  }

  /**
   * Requests a worker made outside the limiter in the window starting at `edge`, kept for that
   * window's refill unless it already happened (refillReservoir).
   */
  async countOutside(edge: number, n: number, windowMs: number): Promise<void> {
    const id = this.#clusterId;
    await this.#link.call(() =>
      this.#link.client.eval(COUNT_OUTSIDE, 2, `${id}:refilled:${edge}`, `${id}:outside:${edge}`, String(n), String(Math.max(1000, windowMs * 2))),
    );
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
    const id = this.#clusterId;
    const result = await this.#link.call(() =>
      this.#link.client.eval(
        REFILL,
        4,
        `b_${id}_settings`,
        `${id}:refilled:${edge}`,
        `${id}:outside:${edge}`,
        `${id}:last-refilled-edge`,
        String(allowance),
        String(minTimeMs),
        String(Math.max(1000, windowMs * 2)),
        String(edge),
      ),
    );
    if (result === -2) return 'late';
    return result === -1 ? undefined : Number(result);
  }

  /** Pauses every worker until `until` (epoch ms); a pause is only ever lengthened, never cut short. */
  async pauseUntil(until: number): Promise<void> {
    const key = `${this.#clusterId}:paused-until`;
    await this.#link.call(async () => {
      const current = Number((await this.#link.client.get(key)) ?? 0);
      if (until > current) await this.#link.client.set(key, String(until), 'PX', Math.max(1000, until - Date.now() + 60_000));
    });
  }

  async pausedUntil(): Promise<number> {
    return Number((await this.#link.call(() => this.#link.client.get(`${this.#clusterId}:paused-until`))) ?? 0);
  }
}

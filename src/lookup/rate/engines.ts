// The two engines that run the rate gate's jobs, behind one interface:
// - Bottleneck for paced rates: `minTime` paces requests evenly across the window, so no burst
//   lands at a window edge; the reservoir holds what the server's current window still allows.
//   Its own refresh is NOT used: its clock starts when the limiter is made, not at the server's
//   reset (#153), and `updateSettings()` stops it for good (#185); the gate refills it at the edges.
//   With Redis it is clustered: one reservoir and one pace for every worker of the account.
// - A lean engine (p-limit plus a token count) above FAST_RATE_PER_SECOND, far beyond any
//   published plan (10 to 400 RPM), where Bottleneck's scheduling (~400 jobs/s) would be the limit
//   and pacing finer than a millisecond means nothing.
import Bottleneck from 'bottleneck';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Coordinator } from '../../cluster/coordinator.js';
import { GateStoppedError } from './gate-errors.js';

/**
 * Where a job queues: `first` ahead of every job waiting (the probe while the API is down:
 * breaker.ts); `soon` ahead of the ordinary ones (a row's --with lookups and a waterfall's next
 * kind: a row already begun is finished before new rows begin, so that rows are written, and the
 * progress moves, from the first answer on, not once the queue of first lookups has drained).
 */
export type GatePriority = 'first' | 'soon' | 'normal';

/** Bottleneck's priorities: 0 is served first, 5 is its default. */
const BOTTLENECK_PRIORITY: Record<GatePriority, number> = { first: 0, soon: 3, normal: 5 };

/** What the rate gate needs from the engine that runs the jobs. */
export interface Engine {
  schedule<T>(task: () => Promise<T>, priority?: GatePriority): Promise<T>;
  /** Settles once the new value is in force (with Redis: stored). */
  setReservoir(n: number): Promise<void>;
  setConcurrency(n: number): void;
  charge(n: number): Promise<void>;
  /** Takes a place in the reservoir now, outside the pace, when one is left (true); with Redis, never (false). */
  takeNow(): Promise<boolean>;
  /** Requests granted a place in the reservoir that wait for their turn at the pace. */
  waitingGrants(): number;
  stop(): Promise<void>;
}

/** Requests per second above which Bottleneck's own overhead would become the limit. */
export const FAST_RATE_PER_SECOND = 200;

export interface ClusterSettings {
  coordinator: Coordinator;
  windowMs: number;
}

export function bottleneckEngine(reservoir: number, minTime: number, concurrency: number, cluster?: ClusterSettings): Engine {
  const limiter = new Bottleneck({
    reservoir,
    minTime,
    // With clustering, concurrency stays per worker (below): a cluster-wide count would keep the
    // jobs of a killed worker "running" until they expire and starve the living ones.
    maxConcurrent: cluster ? null : concurrency,
    ...(cluster
      ? {
          // The first worker of the account stores these settings; the others use them.
          id: cluster.coordinator.id,
          datastore: 'ioredis',
          connection: cluster.coordinator.connection,
          clearDatastore: false,
          timeout: cluster.windowMs * 10,
        }
      : {}),
  });
  const local: LimitFunction | undefined = cluster ? pLimit(Math.max(1, concurrency)) : undefined;
  // Bottleneck reports job errors here too; ours are handled where schedule() is awaited.
  limiter.on('error', () => {});
  // With clearDatastore false, the settings already in Redis win over the constructor's: those of
  // a run that ended minutes ago (another --rpm, another plan) would pace this one. The pace of the
  // worker that started last is put in force, and the reservoir never left above what the server
  // said remains in this window.
  const ready = cluster
    ? (async () => {
        await limiter.ready();
        await (limiter.updateSettings({ minTime }) as unknown as Promise<Bottleneck>);
        const current = await limiter.currentReservoir();
        if (current !== null && current > reservoir) await limiter.incrementReservoir(reservoir - current);
      })()
    : undefined;
  ready?.catch(() => {});
  // Bottleneck's priorities: 0 is served first, 5 is its default. No job has an `expiration`:
  // Bottleneck 2.19.5 never frees the slot of a job past it (a precedence slip in its Job keeps it
  // RUNNING) and rejects the job while its request may still be answered and charged. The request
  // path's own timeout already bounds every request.
  const run = <T>(task: () => Promise<T>, priority: GatePriority = 'normal'): Promise<T> => limiter.schedule({ priority: BOTTLENECK_PRIORITY[priority] }, task);
  return {
    schedule: (task, priority) => (local ? local(() => ready!.then(() => run(task, priority))) : run(task, priority)),
    // Only the reservoir and maxConcurrent are ever updated: no reservoir refresh is configured,
    // so Bottleneck's #185 (updateSettings stops the refresh) cannot bite.
    // (updateSettings returns a promise, whatever Bottleneck's typings say.)
    setReservoir: async (n) => {
      await (limiter.updateSettings({ reservoir: n }) as unknown as Promise<Bottleneck>);
    },
    setConcurrency: (n) => {
      if (local) local.concurrency = Math.max(1, n);
      else limiter.updateSettings({ maxConcurrent: n });
    },
    // With Redis, also how the other workers hear of a reservoir refilled in Redis directly.
    charge: async (n) => {
      await limiter.incrementReservoir(-n);
    },
    // Only alone: another worker could take the last place in Redis between the read and the take.
    takeNow: async () => {
      if (cluster) return false;
      const left = await limiter.currentReservoir();
      if (left === null || left < 1) return false;
      await limiter.incrementReservoir(-1);
      return true;
    },
    // Bottleneck counts a granted job that waits for its minTime slot as RUNNING.
    waitingGrants: () => limiter.counts().RUNNING,
    // Drops the waiting jobs at once. The promise waits for the jobs still running, which with
    // clustering means every worker's: wait a little, not for the whole cluster.
    stop: () => Promise.race([limiter.stop({ dropWaitingJobs: true }), new Promise<void>((resolve) => setTimeout(resolve, 1000).unref())]),
  };
}

export function fastEngine(reservoir: number, concurrency: number): Engine {
  const limit: LimitFunction = pLimit(Math.max(1, concurrency));
  let tokens = reservoir;
  let stopped = false;
  const waiting: Array<(ok: boolean) => void> = [];
  const take = async (): Promise<void> => {
    while (tokens <= 0) {
      if (stopped || !(await new Promise<boolean>((resolve) => waiting.push(resolve)))) throw new GateStoppedError();
    }
    tokens -= 1;
  };
  return {
    schedule: (task) =>
      limit(async () => {
        if (stopped) throw new GateStoppedError();
        await take();
        return task();
      }),
    setReservoir: async (n) => {
      tokens = n;
      for (const wake of waiting.splice(0, Math.max(0, n))) wake(true);
    },
    setConcurrency: (n) => {
      limit.concurrency = Math.max(1, n);
    },
    charge: async (n) => {
      tokens -= n;
    },
    takeNow: async () => {
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
    // A token is taken just before the request starts: no grant waits.
    waitingGrants: () => 0,
    stop: async () => {
      stopped = true;
      for (const wake of waiting.splice(0)) wake(false);
    },
  };
}

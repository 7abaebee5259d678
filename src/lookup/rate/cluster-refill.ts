// The refill of a reservoir shared by several workers through Redis. One worker (whoever takes
// the edge's lock) refills it per window, unless a worker's 429 paused the cluster past the edge.
// Starts near the edge are not known cluster-wide, so the refill happens at the edge itself and
// keeps back, at the shared pace (minTime = window / rpm, kept by Bottleneck in Redis):
// - what may still be on its way: the requests granted before the edge that may reach the server
//   after it. Each worker reports its delay: a high measure of the latency (the whole round trip
//   stands for the one-way part), plus what holds a request between Bottleneck's grant and its
//   departure: a Redis round trip and the worker's longest event-loop stall in the last window
//   (on a busy machine, the largest of the three). The longest counts;
// - what the old reservoir let start since the edge (or the end of a pause), when this timer ran late;
// - one more, for the starts that fall exactly on the edge.
// Then it takes off what workers starting in this window spent outside the limiter
// (RateGate.chargeOutside). Every worker names edges alike (the server's resets), so one turn per
// edge means one refill per window.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Coordinator } from '../../cluster/coordinator.js';
import type { Engine } from './engines.js';

export interface ClusterRefillContext {
  edge: number;
  now: () => number;
  rpm: number;
  windowMs: number;
  latencyHighMs: number;
  /** The end of the pause this worker knows of (read after the Redis round trips). */
  currentPause(): number;
  /** Extends the pause when another worker's 429 paused the cluster past the edge. */
  pauseUntil(until: number): void;
  engine: Engine;
}

export class ClusterRefill {
  readonly #coordinator: Coordinator;
  /** This process's event-loop stalls, which delay a granted request's departure. */
  readonly #loopDelay: IntervalHistogram;
  /** The last measured round trip to Redis (a grant travels it before its request leaves). */
  #redisMs = 0;

  constructor(coordinator: Coordinator) {
    this.#coordinator = coordinator;
    this.#loopDelay = monitorEventLoopDelay({ resolution: 10 });
    this.#loopDelay.enable();
  }

  async refill(at: number, context: ClusterRefillContext): Promise<void> {
    const coordinator = this.#coordinator;
    const { edge, now, rpm, windowMs, engine } = context;
    try {
      const paused = await coordinator.pausedUntil();
      if (paused > at) {
        context.pauseUntil(paused);
        return;
      }
      const minTime = windowMs / rpm;
      const stallMs = this.#loopDelay.max / 1e6;
      this.#loopDelay.reset();
      const asked = now();
      const longestDelayMs = await coordinator.refillTurn(edge, windowMs, context.latencyHighMs + stallMs + this.#redisMs);
      this.#redisMs = now() - asked;
      if (longestDelayMs === undefined) return;
      const onTheirWay = Math.ceil(Math.min(longestDelayMs, windowMs / 5) / minTime);
      const sinceEdge = Math.floor(Math.max(0, now() - Math.max(edge, context.currentPause(), paused)) / minTime);
      const allowance = Math.max(0, rpm - 1 - onTheirWay - sinceEdge);
      const reservoir = await coordinator.refillReservoir(edge, windowMs, allowance, minTime);
      // Set in Redis directly (atomically with what it depends on); an increment of nothing is
      // how Bottleneck tells every worker that the reservoir changed.
      if (reservoir === 'late') return;
      if (reservoir === undefined) await engine.setReservoir(allowance);
      else await engine.charge(0);
    } catch {
      // Redis is gone: the coordinator has told the run.
    }
  }

  stop(): void {
    this.#loopDelay.disable();
  }
}

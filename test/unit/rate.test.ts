// The rate gate on its own: windows, pacing, the 429 pause and stopping, on both engines
// (Bottleneck for paced rates, the lean engine above FAST_RATE_PER_SECOND). On fake timers: the
// gate's clock, Bottleneck's and the tasks' all read the same faked Date.now and setTimeout, so
// the windows and paces below are exact, however busy the machine is.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FAST_RATE_PER_SECOND, GateStoppedError, RateGate } from '../../src/lookup/rate/rate-gate.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Moves the fake clock on, a few milliseconds at a time, until `work` settles. */
async function drive<T>(work: Promise<T>, stepMs = 2, limitMs = 120_000): Promise<T> {
  let settled = false;
  work.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let elapsed = 0; !settled && elapsed < limitMs; elapsed += stepMs) await vi.advanceTimersByTimeAsync(stepMs);
  return work;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs `n` tasks through the gate (driving the fake clock) and returns their start times. */
async function starts(gate: RateGate, n: number, taskMs = 1): Promise<number[]> {
  const times: number[] = [];
  await drive(
    Promise.all(
      Array.from({ length: n }, () =>
        gate.schedule(async () => {
          times.push(Date.now());
          await sleep(taskMs);
        }),
      ),
    ),
  );
  return times.sort((a, b) => a - b);
}

/** Starts per window, windows counted from `firstEdge` every `windowMs`. */
function perWindow(times: number[], firstEdge: number, windowMs: number): number[] {
  const counts = new Map<number, number>();
  for (const t of times) {
    const index = t < firstEdge ? -1 : Math.floor((t - firstEdge) / windowMs);
    counts.set(index, (counts.get(index) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => a[0] - b[0]).map(([, n]) => n);
}

describe('RateGate', () => {
  it('paces evenly and never starts more than the window allows (Bottleneck engine)', async () => {
    const windowMs = 400;
    const rpm = 8; // 20 per second: well under FAST_RATE_PER_SECOND
    expect((rpm * 1000) / windowMs).toBeLessThan(FAST_RATE_PER_SECOND);
    const edge = Date.now() + windowMs;
    const gate = new RateGate({ rpm, windowMs, facts: { remaining: 3, resetAt: new Date(edge) }, edgeMarginMs: 10 });
    const times = await starts(gate, 19);
    await gate.stop();
    const counts = perWindow(times, edge, windowMs);
    // What was left of the first window, then at most rpm per window.
    expect(counts[0]).toBeLessThanOrEqual(3);
    for (const n of counts.slice(1)) expect(n).toBeLessThanOrEqual(rpm);
    // Paced: no burst. Two starts are minTime (windowMs / rpm) apart; a start delayed by a busy
    // machine brings the next one closer, but never near the same instant.
    for (let i = 1; i < times.length; i += 1) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(windowMs / rpm / 2);
  });

  it('counts grants still waiting for their turn at the edge against the new window (Bottleneck engine)', async () => {
    // Bottleneck takes a request's place in the reservoir when it grants it; with room in flight
    // it grants many ahead, each waiting for its slot at the pace, past the edge. Twenty grants
    // at 30 ms with 300 ms left: about ten start after the edge, in the next window.
    const windowMs = 600;
    const rpm = 20;
    const margin = 40;
    const edge = Date.now() + 300;
    const gate = new RateGate({ rpm, windowMs, maxConcurrency: 50, facts: { remaining: rpm, resetAt: new Date(edge) }, edgeMarginMs: margin });
    const times = await starts(gate, 50);
    await gate.stop();
    // Per window, with the starts just before its edge that may reach the server after it.
    for (let e = edge; e < times.at(-1)!; e += windowMs) {
      const counted = times.filter((t) => t >= e - margin && t < e + windowMs).length;
      expect(counted, `window from ${e - edge} ms: ${times.map((t) => t - edge).join(' ')}`).toBeLessThanOrEqual(rpm);
    }
  });

  it('keeps to the window at high rates too (lean engine)', async () => {
    const windowMs = 300;
    const rpm = 300; // 1000 per second
    expect((rpm * 1000) / windowMs).toBeGreaterThan(FAST_RATE_PER_SECOND);
    const edge = Date.now() + windowMs;
    const gate = new RateGate({ rpm, windowMs, facts: { remaining: rpm, resetAt: new Date(edge) }, edgeMarginMs: 5 });
    const times = await starts(gate, 750);
    await gate.stop();
    const counts = perWindow(times, edge, windowMs);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(750);
    for (const n of counts) expect(n).toBeLessThanOrEqual(rpm);
  });

  it('pauses everything until the server says, after a 429', async () => {
    for (const rpm of [60, 6000]) {
      const gate = new RateGate({ rpm, windowMs: 1000, edgeMarginMs: 5 });
      await starts(gate, 2);
      const until = Date.now() + 300;
      gate.pause(new Date(until));
      const times = await starts(gate, 3);
      await gate.stop();
      expect(times[0]).toBeGreaterThanOrEqual(until);
      expect(gate.stats.pauses).toBe(1);
    }
  });

  it('holds the requests granted ahead of their turn when a 429 pauses the run (Bottleneck engine)', async () => {
    // Bottleneck grants up to `concurrency` jobs ahead, each waiting for its minTime slot (20 ms
    // here); sent into the pause they would only be refused. They wait for its end, then go.
    const gate = new RateGate({ rpm: 50, windowMs: 1000, edgeMarginMs: 5, maxConcurrency: 8 });
    let pausedAt = Infinity;
    let until = Infinity;
    const times: number[] = [];
    await drive(
      Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          gate.schedule(async () => {
            times.push(Date.now());
            await sleep(50);
            // The first request's answer is a 429, after the next ones were granted.
            if (i === 0) {
              pausedAt = Date.now();
              until = pausedAt + 300;
              gate.pause(new Date(until));
            }
          }),
        ),
      ),
    );
    await gate.stop();
    expect(times).toHaveLength(6);
    const intoThePause = times.filter((t) => t >= pausedAt && t < until);
    expect(intoThePause, JSON.stringify(times.map((t) => t - pausedAt))).toEqual([]);
    expect(gate.stats.started).toBe(6);
  });

  it('starts at once with the whole window when the reset the account reading named has passed (a slow start)', async () => {
    // The reading said 0 remain until a reset that is already past: a new window has begun.
    // Waiting for the next edge with the old count would idle the run for a whole minute.
    for (const rpm of [60, 6000]) {
      const gate = new RateGate({ rpm, windowMs: 60_000, facts: { remaining: 0, resetAt: new Date(Date.now() - 5) } });
      const started = Date.now();
      const times = await Promise.race([starts(gate, 2), new Promise<number[]>((resolve) => setTimeout(() => resolve([]), 5_000))]);
      await gate.stop();
      expect(times, `rpm ${rpm}`).toHaveLength(2);
      expect(times[0]! - started).toBeLessThan(5_000);
    }
  });

  it('asks the server when to resume after a 429 without a hint', async () => {
    let asked = 0;
    const gate = new RateGate({
      rpm: 6000,
      windowMs: 500,
      edgeMarginMs: 5,
      resync: async () => {
        asked += 1;
        return new Date(Date.now() + 200);
      },
    });
    const before = Date.now();
    gate.pause(undefined);
    const [first] = await starts(gate, 1);
    await gate.stop();
    expect(asked).toBe(1);
    // Waited for the later of its own window edge and the server's reset, never a hot loop.
    expect(first! - before).toBeGreaterThanOrEqual(190);
  });

  it('drops waiting jobs on stop, with GateStoppedError, on both engines', async () => {
    for (const rpm of [10, 100_000]) {
      const gate = new RateGate({ rpm, windowMs: 60_000, facts: { remaining: 1, resetAt: new Date(Date.now() + 60_000) } });
      const first = gate.schedule(async () => 'ran');
      const second = gate.schedule(async () => 'ran');
      await vi.advanceTimersByTimeAsync(20);
      await gate.stop();
      await expect(first).resolves.toBe('ran');
      await expect(second).rejects.toBeInstanceOf(GateStoppedError);
      await expect(gate.schedule(async () => 'late')).rejects.toBeInstanceOf(GateStoppedError);
    }
  });

  it('dropWaiting drops the jobs waiting now at once and sends none of them; later calls take a place left in the window at once, unpaced, and no more than it holds (Bottleneck engine)', async () => {
    const gate = new RateGate({ rpm: 60, windowMs: 60_000, facts: { remaining: 5, resetAt: new Date(Date.now() + 60_000) } });
    const sent: string[] = [];
    const job = (name: string) => gate.schedule(async () => void sent.push(name));
    const first = job('first');
    const waiting = Array.from({ length: 3 }, (_, i) => job(`waiting-${i}`));
    for (const w of waiting) w.catch(() => {});
    await vi.advanceTimersByTimeAsync(20);
    expect(sent).toEqual(['first']);
    gate.dropWaiting();
    for (const w of waiting) await expect(w).rejects.toBeInstanceOf(GateStoppedError);
    // Winding down: a call after it (the last balance reading) waits for no pace and no dropped
    // turn the engine granted ahead (at 60 RPM, one a second, three of them here).
    const at = Date.now();
    await drive(Promise.all([first, job('reading')]), 1);
    expect(Date.now() - at).toBeLessThanOrEqual(2);
    await drive(sleep(10_000));
    expect(sent).toEqual(['first', 'reading']);
    // Only within the window: the dropped jobs gave their places back, 5 - first - reading are
    // left; a sixth waits for the next window.
    await drive(Promise.all([job('a'), job('b'), job('c')]), 1);
    expect(Date.now() - at).toBeLessThan(11_000);
    const sixth = job('sixth');
    await drive(sleep(1_000));
    expect(sent).toEqual(['first', 'reading', 'a', 'b', 'c']);
    await drive(sixth);
    expect(Date.now() - at).toBeGreaterThanOrEqual(59_000);
    await gate.stop();
  });

  it('sizes concurrency from rate and latency, within --concurrency', async () => {
    const gate = new RateGate({ rpm: 600, windowMs: 1000, maxConcurrency: 7 });
    expect(gate.stats.concurrency).toBe(7);
    await gate.stop();
    const auto = new RateGate({ rpm: 60, windowMs: 60_000 });
    // 1 request/s at a half-second latency guess: 1 × 0.5 × 2 + 2.
    expect(auto.stats.concurrency).toBe(3);
    await auto.stop();
  });
});

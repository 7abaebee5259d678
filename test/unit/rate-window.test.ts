// The rate window arithmetic on its own (src/lookup/rate/rate-window.ts and concurrency.ts):
// every method is given the time, so windows of a minute are tested without a clock or a sleep.
import { describe, expect, it } from 'vitest';
import { ConcurrencyModel } from '../../src/lookup/rate/concurrency.js';
import { RateWindow, firstEdge } from '../../src/lookup/rate/rate-window.js';

const MINUTE = 60_000;
const T0 = 1_700_000_000_000;

function windowAt(options: Partial<ConstructorParameters<typeof RateWindow>[0]> = {}): RateWindow {
  return new RateWindow({ windowMs: MINUTE, allowance: 100, marginMs: 250, resetAt: undefined, now: T0, ...options });
}

describe('first edge', () => {
  it("is the server's reset when it is ahead within a window", () => {
    expect(firstEdge(T0 + 20_000, T0, MINUTE)).toBe(T0 + 20_000);
  });
  it('moves on by whole windows when the reset passed during a slow start', () => {
    expect(firstEdge(T0 - 5_000, T0, MINUTE)).toBe(T0 + 55_000);
    expect(firstEdge(T0 - 125_000, T0, MINUTE)).toBe(T0 + 55_000);
  });
  it('takes a reset up to a window and a second ahead (a hint rounded up), not a millisecond more', () => {
    expect(firstEdge(T0 + MINUTE + 1_000, T0, MINUTE)).toBe(T0 + MINUTE + 1_000);
    expect(firstEdge(T0 + MINUTE + 500, T0, MINUTE)).toBe(T0 + MINUTE + 500);
    expect(firstEdge(T0 + MINUTE + 1_001, T0, MINUTE)).toBe(T0 + MINUTE);
  });
  it('a reset at this very moment has passed: the next edge is a window on', () => {
    expect(firstEdge(T0, T0, MINUTE)).toBe(T0 + MINUTE);
  });
  it('moves on from a reset up to ten windows past, not one further back (clock skew)', () => {
    expect(firstEdge(T0 - 10 * MINUTE + 1, T0, MINUTE)).toBe(T0 + 1);
    expect(firstEdge(T0 - 10 * MINUTE - 500, T0, MINUTE)).toBe(T0 + MINUTE);
  });
  it('is one window from now with no reset, or one too far off (clock skew)', () => {
    expect(firstEdge(undefined, T0, MINUTE)).toBe(T0 + MINUTE);
    expect(firstEdge(T0 + 3 * MINUTE, T0, MINUTE)).toBe(T0 + MINUTE);
    expect(firstEdge(T0 - 11 * MINUTE, T0, MINUTE)).toBe(T0 + MINUTE);
  });
});

describe('RateWindow', () => {
  it('refills the whole allowance at an edge when nothing started near it', () => {
    const w = windowAt({ resetAt: T0 + 10_000 });
    expect(w.refill(T0 + 10_250, 0)).toBe(100);
    expect(w.windowEnd).toBe(T0 + 70_000);
  });

  it('counts starts just before the edge, and grants still waiting for their turn, against the new window', () => {
    const w = windowAt({ resetAt: T0 + 10_000 });
    w.started(T0 + 9_000); // long before the edge: the old window's
    w.started(T0 + 9_900); // within the margin: may arrive after the edge
    w.started(T0 + 10_100); // after the edge
    expect(w.refill(T0 + 10_250, 5)).toBe(100 - 2 - 5);
  });

  it('still counts the starts near the edge after thousands in one window (the list is pruned, never of those)', () => {
    const w = windowAt({ allowance: 20_000, resetAt: T0 + 10_000 });
    for (let i = 0; i < 3_000; i += 1) w.started(T0 + 1_000 + i); // long before the edge
    // Within the margin of the edge: the list passes its cap of 4,096 among these, once. With more
    // starts than the cap within three margins of each other (at most 9 s: hundreds a second, far
    // above any account's rate) each start would filter the whole list: under a mutation run's
    // instrumentation 5,000 of them took this test past its 10 s.
    for (let i = 0; i < 1_200; i += 1) w.started(T0 + 9_800 + (i % 200));
    w.started(T0 + 10_100); // after the edge
    expect(w.refill(T0 + 10_250, 0)).toBe(20_000 - 1_200 - 1);
  });

  it('never refills below zero', () => {
    const w = windowAt({ allowance: 3, resetAt: T0 + 10_000 });
    expect(w.refill(T0 + 10_250, 10)).toBe(0);
  });

  it('skips the windows a long pause covered', () => {
    const w = windowAt({ resetAt: T0 + 10_000 });
    expect(w.pauseUntil(T0 + 10_000 + 2 * MINUTE + 300)).toBe(true);
    w.refill(T0 + 10_000 + 2 * MINUTE + 600, 0);
    expect(w.windowEnd).toBe(T0 + 10_000 + 3 * MINUTE);
  });

  it('keeps the longest of several pauses', () => {
    const w = windowAt();
    expect(w.pauseUntil(T0 + 5_000)).toBe(true);
    expect(w.pauseUntil(T0 + 3_000)).toBe(false);
    expect(w.pausedUntil).toBe(T0 + 5_000);
  });

  it("takes a hint far from our edges as the server's own reset, and one just after an edge as confirmation", () => {
    const w = windowAt({ resetAt: T0 + 10_000 });
    w.pauseUntil(T0 + 10_800); // within a second after our edge: hints are rounded up to the second
    expect(w.windowEnd).toBe(T0 + 10_000);
    w.pauseUntil(T0 + 40_000); // mid-window: the server's windows start there
    expect(w.windowEnd).toBe(T0 + 40_000);
  });

  it('waits at least to its own edge, and at least a second, after a 429 without a hint', () => {
    const w = windowAt({ resetAt: T0 + 10_000 });
    expect(w.pauseWithoutHint(T0)).toBe(T0 + 10_000);
    const late = windowAt({ resetAt: T0 + 200 });
    expect(late.pauseWithoutHint(T0)).toBe(T0 + 1_000);
  });

  it('learns the allowance the server really gives from what it accepted in the refused window', () => {
    const w = windowAt({ resetAt: T0 + 10_000 });
    w.refill(T0 + 10_250, 0);
    for (let i = 0; i < 30; i += 1) {
      w.started(T0 + 11_000 + i);
      w.settled(T0 + 11_000 + i, false, T0 + 11_050 + i);
    }
    w.started(T0 + 12_000);
    w.settled(T0 + 12_000, true, T0 + 12_001); // 429
    w.learnAtNextEdge(T0 + 12_001);
    expect(w.refill(T0 + 70_250, 0)).toBe(30);
    expect(w.allowance).toBe(30);
    // It never learns more than it had, and keeps what it learned.
    expect(w.refill(T0 + 130_250, 0)).toBe(30);
  });

  it('ignores answers that came back before the current window began when learning', () => {
    const w = windowAt({ resetAt: T0 + 10_000 });
    w.settled(T0 + 5_000, false, T0 + 5_050); // the previous window's, answered in it
    w.refill(T0 + 10_250, 0);
    w.learnAtNextEdge(T0 + 10_300);
    expect(w.refill(T0 + 70_250, 0)).toBe(1); // at least one
  });

  it('counts in the new window every answer that may have reached the server after the edge, even one answered before its refill', () => {
    // A fast burst at the edge: 30 requests start and are answered within the margin, before the
    // refill; then the 429s come, and the allowance is learned at the end of that window.
    const w = windowAt({ allowance: 6000, resetAt: T0 + 10_000 });
    for (let i = 0; i < 30; i += 1) {
      w.started(T0 + 10_010 + i);
      w.settled(T0 + 10_010 + i, false, T0 + 10_100 + i);
    }
    // Two that left before the edge (one of them 600 ms before, longer than any margin) and were
    // answered after it: on a busy machine they may have reached the server after the edge.
    w.settled(T0 + 9_400, false, T0 + 10_010);
    w.settled(T0 + 9_950, false, T0 + 10_020);
    // One that was answered before the edge is the old window's.
    w.settled(T0 + 9_000, false, T0 + 9_500);
    w.refill(T0 + 10_250, 0);
    w.settled(T0 + 10_300, true, T0 + 10_301); // 429
    w.learnAtNextEdge(T0 + 10_301);
    // And one that left before the edge, answered after the refill.
    w.settled(T0 + 9_900, false, T0 + 10_400);
    expect(w.refill(T0 + 70_250, 0)).toBe(33);
  });

  it('counts an answer whose request straddled the edge in both windows: a few too many, never too few', () => {
    const w = windowAt({ allowance: 6000, resetAt: T0 + 10_000 });
    w.refill(T0 + 10_250, 0);
    for (let i = 0; i < 30; i += 1) w.settled(T0 + 10_500 + i, false, T0 + 10_600 + i);
    w.learnAtNextEdge(T0 + 11_000);
    // Five left before the edge and came back after it: the server counted each in one of the two.
    for (let i = 0; i < 5; i += 1) w.settled(T0 + 69_990, false, T0 + 70_010 + i);
    expect(w.refill(T0 + 70_250, 0)).toBe(35);
    expect(w.allowance).toBe(35);
  });

  it("learns only what the refused window accepted: an answer that left at or after its edge is the next window's, counted there from the edge on", () => {
    const w = windowAt({ allowance: 6000, resetAt: T0 + 10_000 });
    w.refill(T0 + 10_250, 0);
    for (let i = 0; i < 30; i += 1) w.settled(T0 + 10_500 + i, false, T0 + 10_600 + i);
    w.learnAtNextEdge(T0 + 11_000);
    // Between the edge and its refill: one left exactly at the edge, one after it, one answered exactly at it.
    w.settled(T0 + 70_000, false, T0 + 70_050);
    w.settled(T0 + 70_100, false, T0 + 70_150);
    w.settled(T0 + 69_000, false, T0 + 70_000);
    expect(w.refill(T0 + 70_250, 0)).toBe(31);
    // The next window starts with the three answered from its edge on; a 429 in it learns them.
    w.learnAtNextEdge(T0 + 71_000);
    expect(w.refill(T0 + 130_250, 0)).toBe(3);
  });

  it('learns from the window a 429 came in, even when it came between the edge and its refill', () => {
    const w = windowAt({ allowance: 6000, resetAt: T0 + 10_000 });
    // The old window accepted 3; the new one's burst is refused before the refill (edge + margin).
    for (let i = 0; i < 3; i += 1) w.settled(T0 + 9_000 + i, false, T0 + 9_100 + i);
    for (let i = 0; i < 30; i += 1) w.started(T0 + 10_001 + i);
    w.learnAtNextEdge(T0 + 10_100);
    // The refill of that edge does not learn from the old window's 3...
    w.refill(T0 + 10_250, 30);
    expect(w.allowance).toBe(6000);
    // ...the end of the new window learns its 30 (answered after the refill).
    for (let i = 0; i < 30; i += 1) w.settled(T0 + 10_001 + i, false, T0 + 10_300 + i);
    expect(w.refill(T0 + 70_250, 0)).toBe(30);
    expect(w.allowance).toBe(30);
  });

  it('forgets a start that sent nothing, and only that one', () => {
    const w = windowAt({ resetAt: T0 + 10_000 });
    w.started(T0 + 9_800);
    w.started(T0 + 9_900);
    w.unstarted(T0 + 9_800); // the first of the list
    expect(w.refill(T0 + 10_250, 0)).toBe(100 - 1);
    const other = windowAt({ resetAt: T0 + 10_000 });
    other.started(T0 + 9_800);
    other.unstarted(T0 + 9_850); // never started: nothing to forget
    expect(other.refill(T0 + 10_250, 0)).toBe(100 - 1);
  });

  it('counts a start exactly at the margin before the edge in the new window', () => {
    const w = windowAt({ resetAt: T0 + 10_000 });
    w.started(T0 + 9_750);
    w.started(T0 + 9_749);
    expect(w.refill(T0 + 10_250, 0)).toBe(100 - 1);
  });

  it('a refill asked before its margin has passed refills the window still ending, not the next', () => {
    const w = windowAt({ resetAt: T0 + 10_000 });
    w.refill(T0 + 10_000, 0);
    expect(w.windowEnd).toBe(T0 + 10_000);
    w.refill(T0 + 10_250, 0);
    expect(w.windowEnd).toBe(T0 + 70_000);
  });

  it('a pause to the same moment as the one in force changes nothing', () => {
    const w = windowAt();
    expect(w.pauseUntil(T0 + 5_000)).toBe(true);
    expect(w.pauseUntil(T0 + 5_000)).toBe(false);
  });

  it("a hint up to a second and the margin after one of our edges confirms it; a millisecond more is the server's own reset", () => {
    // An edge that is no whole number of windows from the epoch's: the hint is measured from it.
    const confirmed = windowAt({ resetAt: T0 + 20_000 });
    confirmed.pauseUntil(T0 + 20_000 + 1_000 + 250);
    expect(confirmed.windowEnd).toBe(T0 + 20_000);
    const later = windowAt({ resetAt: T0 + 20_000 });
    later.pauseUntil(T0 + 20_000 + 2 * MINUTE + 800); // two windows on, still just after an edge
    expect(later.windowEnd).toBe(T0 + 20_000);
    const reset = windowAt({ resetAt: T0 + 20_000 });
    reset.pauseUntil(T0 + 20_000 + 1_000 + 251);
    expect(reset.windowEnd).toBe(T0 + 21_251);
  });

  it('a 429 without a hint exactly at an edge belongs to the new window: learned at its end, not at this refill', () => {
    const w = windowAt({ resetAt: T0 + 10_000 });
    w.started(T0 + 5_000);
    w.settled(T0 + 5_000, false, T0 + 5_050);
    w.learnAtNextEdge(T0 + 10_000);
    expect(w.refill(T0 + 10_250, 0)).toBe(100);
    expect(w.allowance).toBe(100);
    expect(w.refill(T0 + 70_250, 0)).toBe(1);
  });

  it('keeps the list of recent starts short at high rates', () => {
    const w = windowAt({ allowance: 100_000, resetAt: T0 + 10_000, marginMs: 10 });
    for (let i = 0; i < 5000; i += 1) w.started(T0 + i);
    // Starts long before the edge were pruned on the way: only those near it count.
    expect(w.refill(T0 + 10_010, 0)).toBe(100_000);
  });
});

describe('ConcurrencyModel', () => {
  it("sizes concurrency by Little's law from the rate and the latency, doubled, plus two", () => {
    expect(new ConcurrencyModel({ rpm: 60, windowMs: MINUTE, maxConcurrency: undefined, latencyHintMs: undefined }).concurrency).toBe(3);
    expect(new ConcurrencyModel({ rpm: 6000, windowMs: MINUTE, maxConcurrency: undefined, latencyHintMs: undefined }).concurrency).toBe(102);
  });

  it('stays within --concurrency and the automatic ceiling', () => {
    expect(new ConcurrencyModel({ rpm: 600, windowMs: 1000, maxConcurrency: 7, latencyHintMs: undefined }).concurrency).toBe(7);
    expect(new ConcurrencyModel({ rpm: 600_000, windowMs: MINUTE, maxConcurrency: undefined, latencyHintMs: undefined }).concurrency).toBe(256);
  });

  it('follows the measured latency, checked every 16 answers', () => {
    const model = new ConcurrencyModel({ rpm: 6000, windowMs: MINUTE, maxConcurrency: undefined, latencyHintMs: undefined });
    const changes: number[] = [];
    for (let i = 0; i < 160; i += 1) {
      const next = model.observe(10);
      if (next !== undefined) changes.push(next);
    }
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.length).toBeLessThanOrEqual(10);
    expect(model.concurrency).toBeLessThan(202);
    expect(model.concurrency).toBeGreaterThanOrEqual(3);
  });

  it('halves while the event loop is saturated (not below 16) and grows back by quarters when it has room', () => {
    let busy = 1;
    const model = new ConcurrencyModel({ rpm: 600_000, windowMs: MINUTE, maxConcurrency: undefined, latencyHintMs: undefined, busy: () => busy });
    const sixteen = (latencyMs: number) => {
      for (let i = 0; i < 16; i += 1) model.observe(latencyMs);
      return model.concurrency;
    };
    expect(model.concurrency).toBe(256);
    expect([sixteen(1000), sixteen(1000), sixteen(1000), sixteen(1000), sixteen(1000)]).toEqual([128, 64, 32, 16, 16]);
    busy = 0.75; // between the thresholds: stays
    expect(sixteen(1000)).toBe(16);
    busy = 0.1;
    expect([sixteen(1000), sixteen(1000), sixteen(1000)]).toEqual([20, 25, 32]);
    for (let i = 0; i < 20; i += 1) sixteen(1000);
    expect(model.concurrency).toBe(256); // back to the automatic ceiling: no limit of its own any more
  });

  it('never raises the concurrency above what the rate needs, saturated or not', () => {
    const model = new ConcurrencyModel({ rpm: 60, windowMs: MINUTE, maxConcurrency: undefined, latencyHintMs: undefined, busy: () => 1 });
    for (let i = 0; i < 64; i += 1) model.observe(1000);
    expect(model.concurrency).toBe(4);
  });

  it('keeps a high latency estimate: up at once, down slowly, capped at a tenth of the window', () => {
    const model = new ConcurrencyModel({ rpm: 60, windowMs: MINUTE, maxConcurrency: undefined, latencyHintMs: 100 });
    expect(model.latencyHighMs).toBe(100);
    model.observe(5_000);
    expect(model.latencyHighMs).toBe(5_000);
    model.observe(1_000_000);
    expect(model.latencyHighMs).toBe(6_000);
    model.observe(0);
    expect(model.latencyHighMs).toBeCloseTo(6_000 * 0.98);
  });
});

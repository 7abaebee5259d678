// The parts of run/refresh-order.ts that need no file (test/integration/refresh-order.test.ts runs
// the whole on a file against the sandbox): when a run orders its refreshes at all, when the store
// holds an answer old enough to wait, and the line a run says when answers wait for their turn.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { speakingTo } from '../../src/api/caller-words.js';
import { holdsStaleAnswers, OldestFound, ordersRefreshes, refreshLine, type StoredAges } from '../../src/run/refresh-order.js';
import type { EnrichSettings } from '../../src/run/settings.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-03-14T10:00:00Z');

/** A run's settings as far as the refresh order reads them: a file, a day's budget, --max-age 30d. */
function settings(over: Partial<EnrichSettings> = {}): EnrichSettings {
  return { input: 'in.csv', budget: [{ credits: 100, per: 'day' }], refresh: false, redis: undefined, maxAge: 30 * DAY, ...over } as EnrichSettings;
}

/** A store whose oldest answer of the service was fetched at `oldest` (undefined: none stored). */
function storedWith(oldest: number | undefined): StoredAges {
  const store = { stats: () => ({ oldest }) } as unknown as StoredAges['store'];
  return { store, service: 'svc', layout: () => undefined, now: NOW };
}

describe('a run orders its refreshes', () => {
  it('with a budget, on a file, asking not every key again, alone, with a --max-age', () => {
    expect(ordersRefreshes(settings())).toBe(true);
  });

  it.each([
    ['no budget', { budget: [] }],
    ['a stream input (read once)', { input: new PassThrough() }],
    ['--refresh (every key asked again)', { refresh: true }],
    ['--redis (the workers share the budget)', { redis: 'redis://127.0.0.1:1' }],
    ['no --max-age (nothing is ever stale)', { maxAge: Number.POSITIVE_INFINITY }],
  ] as const)('not with %s', (_what, over) => {
    expect(ordersRefreshes(settings(over as Partial<EnrichSettings>))).toBe(false);
  });
});

describe('the store holds an answer old enough to wait', () => {
  it('older than --max-age: yes; exactly --max-age old or younger: no; none stored: no', () => {
    expect(holdsStaleAnswers(settings(), storedWith(NOW - 30 * DAY - 1))).toBe(true);
    expect(holdsStaleAnswers(settings(), storedWith(NOW - 30 * DAY))).toBe(false);
    expect(holdsStaleAnswers(settings(), storedWith(NOW - DAY))).toBe(false);
    expect(holdsStaleAnswers(settings(), storedWith(undefined))).toBe(false);
  });
});

describe('what a run says when answers wait for their turn', () => {
  it('the newest refreshed, to the minute, in UTC; the younger keep their stored answer', () => {
    expect(speakingTo('cli', () => refreshLine(Date.parse('2026-02-01T08:05:59.999Z')))).toBe(
      'the budgets cannot pay for every refresh this run needs: the keys with no answer first, then answers older than --max-age and fetched after 2026-02-01 08:05 UTC keep their stored answer (stale), the older ones are looked up again',
    );
  });

  it('no refresh at all when the new keys take every credit; a program is told its option', () => {
    expect(speakingTo('library', () => refreshLine(Number.NEGATIVE_INFINITY))).toBe(
      'the budgets cannot pay for every refresh this run needs: the keys with no answer first, then no answer older than maxAge is looked up again',
    );
  });
});

describe('the oldest found answers the credits pay for (OldestFound)', () => {
  /** What the cutoff must be, from every offer at once: the slots-th oldest distinct answer. */
  function expectedCutoff(capacity: number, newKeys: number, offers: ReadonlyArray<[string, number]>): number | undefined {
    const ages = new Map<string, number>();
    for (const [key, at] of offers) if (!ages.has(key)) ages.set(key, at);
    const slots = capacity - Math.min(newKeys, capacity);
    if (ages.size <= slots) return undefined;
    if (slots <= 0) return Number.NEGATIVE_INFINITY;
    return [...ages.values()].sort((a, b) => a - b)[slots - 1];
  }

  /** A small seeded generator (mulberry32): the same cases on every run. */
  function random(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
    };
  }

  it('agrees with sorting every offer, over 2,000 drawn files (keys repeated, ages tied, new keys among them)', () => {
    const next = random(20261207);
    for (let file = 0; file < 2_000; file += 1) {
      const capacity = Math.floor(next() * 8);
      const found = new OldestFound(capacity);
      const offers: Array<[string, number]> = [];
      let newKeys = 0;
      const seen = new Set<string>();
      for (let row = 0, rows = Math.floor(next() * 30); row < rows; row += 1) {
        if (next() < 0.15) {
          const key = `new${Math.floor(next() * 6)}`;
          if (!seen.has(key) && !found.full) newKeys += 1;
          seen.add(key);
          found.newKey(key);
          continue;
        }
        const id = Math.floor(next() * 12);
        // A key's age is its own: a repeated key comes with the same age.
        const at = 1_000 + ((id * 7) % 5) * 10;
        offers.push([`k${id}`, at]);
        found.offer(`k${id}`, at);
      }
      expect(found.cutoff(), `file ${file}: capacity ${capacity}, ${newKeys} new keys, offers ${JSON.stringify(offers)}`).toBe(
        expectedCutoff(capacity, newKeys, offers),
      );
    }
  });

  it('full once the new keys take every lookup', () => {
    const found = new OldestFound(2);
    found.newKey('a');
    expect(found.full).toBe(false);
    found.newKey('a');
    expect(found.full).toBe(false);
    found.newKey('b');
    expect(found.full).toBe(true);
  });
});

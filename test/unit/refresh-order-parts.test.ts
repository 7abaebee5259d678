// The parts of run/refresh-order.ts that need no file (test/integration/refresh-order.test.ts runs
// the whole on a file against the sandbox): when a run orders its refreshes at all, when the store
// holds an answer old enough to wait, and the line a run says when answers wait for their turn.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { speakingTo } from '../../src/api/caller-words.js';
import { holdsStaleAnswers, ordersRefreshes, refreshLine, type StoredAges } from '../../src/run/refresh-order.js';
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

// ResultStore.foundOf: the count's question (a dry run, the offline glance) — found, not found, or
// not stored — answered without parsing the stored answer, and always as get() would answer it.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ResultStore } from '../../src/store/result-store.js';
import { makeTempDir } from '../helpers/files.js';

const opened: ResultStore[] = [];
afterEach(() => {
  for (const store of opened.splice(0)) store.close();
});

function storeAt(now: () => number): ResultStore {
  const store = ResultStore.open({ path: path.join(makeTempDir(), 'store.sqlite'), now });
  opened.push(store);
  return store;
}

describe('ResultStore.foundOf', () => {
  it('says found, not found, refused (not found) and not stored as get() does, pending and flushed alike', () => {
    let clock = 1_000_000;
    const store = storeAt(() => clock);
    store.put('svc', 'lookup_email', 'found@x.test', { found: true, data: { lead: { name: 'A' } } }, 'r1');
    store.put('svc', 'lookup_email', 'miss@x.test', { found: false, data: {} }, 'r1');
    store.put('svc', 'lookup_email', 'bad@x.test', { found: false, data: undefined, refused: 'malformed' }, 'r1');
    const ask = (key: string, freshForMs?: number) => [
      store.foundOf('svc', 'lookup_email', key, freshForMs),
      store.get('svc', 'lookup_email', key, freshForMs)?.found,
    ];
    for (const when of ['pending', 'flushed']) {
      if (when === 'flushed') store.flush();
      expect(ask('found@x.test'), when).toEqual([true, true]);
      expect(ask('miss@x.test'), when).toEqual([false, false]);
      expect(ask('bad@x.test'), when).toEqual([false, false]);
      expect(ask('nobody@x.test'), when).toEqual([undefined, undefined]);
      expect(store.foundOf('other-service', 'lookup_email', 'found@x.test'), when).toBeUndefined();
      expect(store.foundOf('svc', 'lookup_url', 'found@x.test'), when).toBeUndefined();
    }
    // Older than --max-age: not stored, for both.
    clock += 10_000;
    expect(ask('found@x.test', 5_000)).toEqual([undefined, undefined]);
    expect(ask('found@x.test', 20_000)).toEqual([true, true]);
  });

  it('refuses a closed store as get() does', () => {
    const store = storeAt(Date.now);
    store.close();
    expect(() => store.foundOf('svc', 'lookup_email', 'a@x.test')).toThrow(/closed/i);
  });
});

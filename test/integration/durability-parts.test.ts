// The parts of durability on their own: claims in the store's file (store-claims.ts),
// the output lock (write/output-lock.ts), and what a run says it spent (lookup/credits.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { OutputLockedError, UnwritableOutputError } from '../../src/api/errors.js';
import { CreditGuard } from '../../src/lookup/credits.js';
import { ResultStore } from '../../src/store/result-store.js';
import { OutputLock } from '../../src/write/output-lock.js';
import { makeTempDir } from '../helpers/files.js';
import { runSync } from '../helpers/processes.js';

/** A pid no process has: one that just exited. */
function deadPid(): number {
  return runSync(process.execPath, ['-e', '0']).pid!;
}

describe('claims in the store', () => {
  function twoRuns(now = () => Date.now()) {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const a = ResultStore.open({ path: file, now });
    const b = ResultStore.open({ path: file, now });
    const claimsA = a.claims('run-a', 'svc', 30_000);
    const claimsB = b.claims('run-b', 'svc', 30_000);
    // run-a was alone when it started: its sweep (within a second) sees run-b and it claims from then on.
    claimsA.sweep();
    return { file, a: claimsA, b: claimsB, stores: [a, b] };
  }

  it('one run holds a key; the other may not take it until it is released', () => {
    const { a, b, stores } = twoRuns();
    expect(a.claim('lookup_email', 'k1')).toBe(true);
    expect(a.claim('lookup_email', 'k1')).toBe(true); // its own, again
    expect(b.claim('lookup_email', 'k1')).toBe(false);
    expect(b.claim('lookup_email', 'k2')).toBe(true); // another key is free
    a.release('lookup_email', 'k1');
    expect(b.claim('lookup_email', 'k1')).toBe(true);
    stores.forEach((s) => {
      s.close();
    });
  });

  it("an answered key's claim goes with the next sweep; releaseAll drops the rest", () => {
    const { a, b, stores } = twoRuns();
    a.claim('lookup_email', 'k1');
    a.claim('lookup_email', 'k2');
    a.answered('lookup_email', 'k1');
    expect(b.claim('lookup_email', 'k1')).toBe(false);
    a.sweep();
    expect(b.claim('lookup_email', 'k1')).toBe(true);
    expect(b.claim('lookup_email', 'k2')).toBe(false);
    a.releaseAll();
    expect(b.claim('lookup_email', 'k2')).toBe(true);
    stores.forEach((s) => {
      s.close();
    });
  });

  it('a claim goes only once its answer is committed: the run that takes the key next finds the answer', () => {
    // Answers kept in memory for a minute (a batching caller), so that only the claims' own flush commits them.
    const file = path.join(makeTempDir(), 'store.sqlite');
    const storeA = ResultStore.open({ path: file, flushIntervalMs: 60_000 });
    const storeB = ResultStore.open({ path: file });
    const a = storeA.claims('run-a', 'svc', 30_000);
    const b = storeB.claims('run-b', 'svc', 30_000);
    a.sweep();
    for (const key of ['k1', 'k2']) expect(a.claim('lookup_email', key)).toBe(true);
    storeA.put('svc', 'lookup_email', 'k1', { found: true, data: { email: 'k1' } }, 'run-a');
    a.answered('lookup_email', 'k1');
    a.sweep();
    expect(b.claim('lookup_email', 'k1')).toBe(true);
    expect(storeB.get('svc', 'lookup_email', 'k1')?.data).toEqual({ email: 'k1' });
    // The run ends with an answer received since its last sweep: committed before its claims go.
    storeA.put('svc', 'lookup_email', 'k2', { found: true, data: { email: 'k2' } }, 'run-a');
    a.answered('lookup_email', 'k2');
    a.releaseAll();
    expect(b.claim('lookup_email', 'k2')).toBe(true);
    expect(storeB.get('svc', 'lookup_email', 'k2')?.data).toEqual({ email: 'k2' });
    for (const store of [storeA, storeB]) store.close();
  });

  it("lapses when it was not renewed for a lease as the waiting run's own clock measures it; a sweep renews it", () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    let now = 1_000_000;
    const elapsed = { a: 0, b: 0 };
    const [storeA, storeB] = [ResultStore.open({ path: file, now: () => now }), ResultStore.open({ path: file, now: () => now })];
    const a = storeA.claims('run-a', 'svc', 30_000, () => elapsed.a);
    const b = storeB.claims('run-b', 'svc', 30_000, () => elapsed.b);
    a.sweep();
    a.claim('lookup_email', 'k2');
    expect(b.claim('lookup_email', 'k2')).toBe(false); // seen for the first time: its lease starts now for run-b
    elapsed.b += 20_000;
    now += 20_000;
    a.sweep(); // renews k2
    expect(b.claim('lookup_email', 'k2')).toBe(false);
    elapsed.b += 29_999;
    expect(b.claim('lookup_email', 'k2')).toBe(false);
    elapsed.b += 1;
    expect(b.claim('lookup_email', 'k2')).toBe(true); // a whole lease without renewal
    [storeA, storeB].forEach((s) => {
      s.close();
    });
  });

  it('a run whose clock is a day ahead takes no live claim, and waits for a live run (a key is never paid twice for a clock)', () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const storeA = ResultStore.open({ path: file });
    const a = storeA.claims('run-a', 'svc', 30_000);
    expect(a.claim('lookup_email', 'k1')).toBe(true);
    const storeB = ResultStore.open({ path: file, now: () => Date.now() + 86_400_000 });
    const b = storeB.claims('run-b', 'svc', 30_000);
    // run-a is alive: run-b shares the store and waits for run-a to claim its key in flight.
    expect(b.sharing).toBe(true);
    expect(b.claim('lookup_email', 'k1')).toBe(false);
    a.sweep();
    expect(b.claim('lookup_email', 'k1')).toBe(false);
    expect(b.claim('lookup_email', 'k2')).toBe(true);
    // The claim run-b took carries its own clock's deadline, a day ahead: run-a does not take it either.
    expect(a.claim('lookup_email', 'k2')).toBe(false);
    [storeA, storeB].forEach((s) => {
      s.close();
    });
  });

  it('lapses at once when its process on this host is gone (a run killed with -9)', () => {
    const { file, b, stores } = twoRuns();
    const raw = ResultStore.open({ path: file });
    raw.close();
    // A claim as a killed process left it: its pid, this host, a lease far from over.
    const db = new DatabaseSync(file);
    db.prepare('INSERT INTO claims VALUES (?, ?, ?, ?, ?, ?, ?)').run('svc', 'lookup_email', 'k1', 'run-dead', deadPid(), os.hostname(), Date.now() + 60_000);
    db.prepare('INSERT INTO claims VALUES (?, ?, ?, ?, ?, ?, ?)').run('svc', 'lookup_email', 'k2', 'run-far', deadPid(), 'another-host', Date.now() + 60_000);
    db.close();
    expect(b.claim('lookup_email', 'k1')).toBe(true);
    // On another host the pid means nothing: the lease decides.
    expect(b.claim('lookup_email', 'k2')).toBe(false);
    stores.forEach((s) => {
      s.close();
    });
  });
});

describe('a run alone on its store', () => {
  function claimRows(file: string): Array<{ key: string; owner: string }> {
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      return db.prepare('SELECT key, owner FROM claims ORDER BY key').all() as Array<{ key: string; owner: string }>;
    } finally {
      db.close();
    }
  }

  it('claims nothing in the file until another run registers; then its keys in flight are claimed at its next claim (100 ms on)', () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    let now = Date.now();
    const storeA = ResultStore.open({ path: file, now: () => now });
    const a = storeA.claims('run-a', 'svc', 30_000);
    expect(a.claim('lookup_email', 'k1')).toBe(true);
    expect(a.claim('lookup_email', 'k2')).toBe(true);
    a.answered('lookup_email', 'k2');
    expect(a.sharing).toBe(false);
    expect(claimRows(file)).toEqual([]);

    const storeB = ResultStore.open({ path: file });
    const b = storeB.claims('run-b', 'svc', 30_000);
    expect(b.sharing).toBe(true);
    // run-a has not claimed its keys in flight yet: run-b waits, whatever the key.
    expect(b.claim('lookup_email', 'k3')).toBe(false);
    now += 100; // run-a looks for newcomers every 100 ms at most
    expect(a.claim('lookup_email', 'k4')).toBe(true);
    expect(a.sharing).toBe(true);
    expect(claimRows(file)).toEqual([
      { key: 'k1', owner: 'run-a' },
      { key: 'k4', owner: 'run-a' },
    ]);
    expect(b.claim('lookup_email', 'k1')).toBe(false);
    expect(b.claim('lookup_email', 'k2')).toBe(true); // answered before run-b came: not held
    expect(b.claim('lookup_email', 'k3')).toBe(true);
    [storeA, storeB].forEach((s) => {
      s.close();
    });
  });

  it('commits its answers before it lets the newcomer in: the newcomer finds them', () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const storeA = ResultStore.open({ path: file, flushIntervalMs: 60_000 });
    const a = storeA.claims('run-a', 'svc', 30_000);
    expect(a.claim('lookup_email', 'k1')).toBe(true);
    storeA.put('svc', 'lookup_email', 'k1', { found: true, data: { name: 'Ada' } }, 'run-a');
    a.answered('lookup_email', 'k1');
    const storeB = ResultStore.open({ path: file });
    const b = storeB.claims('run-b', 'svc', 30_000);
    expect(storeB.get('svc', 'lookup_email', 'k1')).toBeUndefined();
    a.sweep(); // what run-a's timer does within a second, also when it sends nothing
    expect(storeB.get('svc', 'lookup_email', 'k1')?.found).toBe(true);
    expect(b.claim('lookup_email', 'k9')).toBe(true);
    [storeA, storeB].forEach((s) => {
      s.close();
    });
  });

  it('does not wait for a run that ended, nor for one whose process is gone', () => {
    const file = path.join(makeTempDir(), 'store.sqlite');
    const storeA = ResultStore.open({ path: file });
    const a = storeA.claims('run-a', 'svc', 30_000);
    a.releaseAll(); // the run is over
    const storeB = ResultStore.open({ path: file });
    const b = storeB.claims('run-b', 'svc', 30_000);
    expect(b.sharing).toBe(false);
    expect(b.claim('lookup_email', 'k1')).toBe(true);
    // A registration as a run killed with -9 left it: this host, its pid gone, a lease far from over.
    const db = new DatabaseSync(file);
    db.prepare('INSERT INTO runs VALUES (?, ?, ?, ?, ?)').run('run-dead', deadPid(), os.hostname(), Date.now() + 60_000, 0);
    db.close();
    const storeC = ResultStore.open({ path: file });
    const c = storeC.claims('run-c', 'svc', 30_000);
    expect(c.sharing).toBe(true); // run-b is alive
    b.sweep();
    expect(c.claim('lookup_email', 'k2')).toBe(true); // run-b claims now; run-dead is not waited for
    expect(c.claim('lookup_email', 'k1')).toBe(false); // run-b's key in flight
    [storeA, storeB, storeC].forEach((s) => {
      s.close();
    });
  });
});

describe('the output lock', () => {
  it('a second lock on one file is refused, naming the file and the holder; released, it can be taken', () => {
    const out = path.join(makeTempDir(), 'out.csv');
    const lock = OutputLock.acquire(out, 'output');
    expect(() => OutputLock.acquire(out, 'output')).toThrow(OutputLockedError);
    expect(() => OutputLock.acquire(out, 'output')).toThrow(new RegExp(`${out.replace(/[/.]/g, '\\$&')} \\(pid ${process.pid} on `));
    lock.release();
    expect(fs.existsSync(OutputLock.pathFor(out))).toBe(false);
    OutputLock.acquire(out, 'output').release();
  });

  it('a lock whose process is gone is taken over; one of another host is, once not refreshed for a minute', () => {
    const dir = makeTempDir();
    const out = path.join(dir, 'out.csv');
    fs.writeFileSync(OutputLock.pathFor(out), JSON.stringify({ pid: deadPid(), host: os.hostname(), started: 'then' }));
    OutputLock.acquire(out, 'output').release();
    fs.writeFileSync(OutputLock.pathFor(out), JSON.stringify({ pid: 1, host: 'another-host', started: 'then' }));
    expect(() => OutputLock.acquire(out, 'output')).toThrow(/pid 1 on another-host/);
    const old = new Date(Date.now() - 120_000);
    fs.utimesSync(OutputLock.pathFor(out), old, old);
    OutputLock.acquire(out, 'output').release();
  });

  it('a path that cannot be written is said in words, not as a lock', () => {
    const file = path.join(makeTempDir(), 'a-file');
    fs.writeFileSync(file, '');
    expect(() => OutputLock.acquire(path.join(file, 'out.csv'), 'output')).toThrow(UnwritableOutputError);
    expect(() => OutputLock.acquire(path.join(file, 'out.csv'), 'output')).toThrow(/a part of the path is a file, not a folder/);
  });
});

describe('what a run spent', () => {
  function charge(guard: CreditGuard, op: 'lookup_email' | 'mx', n: number): void {
    for (let i = 0; i < n; i += 1) guard.finish(guard.tryBegin(op)!, true);
  }

  it('is its own charges, also when another client makes the balance fall more', () => {
    const guard = new CreditGuard({ balance: 1000, reserve: 0 });
    charge(guard, 'lookup_email', 10);
    guard.reading(1000 - 40 - 30); // another client spent 30 meanwhile
    expect(guard.spent).toBe(40);
  });

  it('learns an unpublished cost from the balance, taking off what the others cost, at the least fall seen', () => {
    const guard = new CreditGuard({ balance: 1000, reserve: 0 });
    charge(guard, 'lookup_email', 5);
    charge(guard, 'mx', 4);
    guard.reading(1000 - 20 - 4 * 3); // another client spent 4 more: mx looks like 3
    expect(guard.costOf('mx')).toBe(3);
    charge(guard, 'mx', 4);
    guard.reading(968 - 4); // alone now: 1 each
    expect(guard.costOf('mx')).toBe(1);
    expect(guard.spent).toBe(20 + 8);
  });
});

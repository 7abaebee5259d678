// OrderedWindow on its own: out-of-order completion, in-order departure, back-pressure, giving up
// pending items after a deadline. No server, no sleeping: promises settled by hand.
import { describe, expect, it } from 'vitest';
import { OrderedWindow } from '../../src/run/ordered-window.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const never = new AbortController().signal;
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('OrderedWindow', () => {
  it('lets items leave in the order they entered, whatever order they complete in', async () => {
    const window = new OrderedWindow<string>(10);
    const a = deferred<string>();
    const c = deferred<string>();
    window.addPending(a.promise, () => 'a?');
    window.add('b');
    window.addPending(c.promise, () => 'c?');
    window.add('d');
    expect(window.takeReady()).toEqual([]);
    c.resolve('c');
    await tick();
    expect(window.takeReady()).toEqual([]);
    a.resolve('a');
    await tick();
    expect(window.takeReady()).toEqual(['a', 'b', 'c', 'd']);
    expect(window.size).toBe(0);
    expect(window.pending).toBe(0);
  });

  it('takes ready items at once without any promise, in order', () => {
    const window = new OrderedWindow<number>(5000);
    for (let i = 0; i < 3000; i += 1) window.add(i);
    const out = window.takeReady();
    expect(out).toHaveLength(3000);
    expect(out[2999]).toBe(2999);
    // The head index is compacted away: the window is reusable and empty.
    window.add(3000);
    expect(window.takeReady()).toEqual([3000]);
    expect(window.size).toBe(0);
  });

  it('says it is full at its capacity (back-pressure), and has room again once the head leaves', async () => {
    const window = new OrderedWindow<string>(2);
    const head = deferred<string>();
    window.addPending(head.promise, () => 'gave up');
    window.add('x');
    expect(window.isFull).toBe(true);
    let waited = false;
    const wait = window.waitForHead(never).then(() => (waited = true));
    await tick();
    expect(waited).toBe(false);
    head.resolve('h');
    await wait;
    expect(window.takeReady()).toEqual(['h', 'x']);
    expect(window.isFull).toBe(false);
  });

  it('counts pending items and wakes a waiter when any one settles, not only the head', async () => {
    const window = new OrderedWindow<string>(10);
    const first = deferred<string>();
    const second = deferred<string>();
    window.addPending(first.promise, () => '1?');
    window.addPending(second.promise, () => '2?');
    expect(window.pending).toBe(2);
    const woke = window.waitForAnySettled(never);
    second.resolve('2');
    await woke;
    expect(window.pending).toBe(1);
    expect(window.takeReady()).toEqual([]);
  });

  it('stops waiting when the signal aborts (a stop while waiting)', async () => {
    const window = new OrderedWindow<string>(10);
    window.addPending(new Promise<string>(() => {}), () => 'never');
    const controller = new AbortController();
    const head = window.waitForHead(controller.signal);
    const any = window.waitForAnySettled(controller.signal);
    controller.abort();
    await Promise.all([head, any]);
    // Already aborted: resolves at once.
    await window.waitForHead(controller.signal);
    expect(window.pending).toBe(1);
  });

  it('gives up a head that does not settle by the deadline: its fallback leaves in its place', async () => {
    const window = new OrderedWindow<string>(10);
    window.addPending(new Promise<string>(() => {}), () => 'skipped');
    window.add('next');
    let asked = 0;
    await window.abandonHead(() => {
      asked += 1;
      return Promise.resolve();
    });
    expect(asked).toBe(1);
    expect(window.takeReady()).toEqual(['skipped', 'next']);
  });

  it('does not ask for the deadline when the head is ready already (the drain timer starts only when needed)', async () => {
    const window = new OrderedWindow<string>(10);
    window.add('ready');
    let asked = 0;
    await window.abandonHead(() => {
      asked += 1;
      return Promise.resolve();
    });
    expect(asked).toBe(0);
  });

  it('keeps the answer of a head that settles before the deadline', async () => {
    const window = new OrderedWindow<string>(10);
    const head = deferred<string>();
    window.addPending(head.promise, () => 'skipped');
    const deadline = deferred<void>();
    const abandoning = window.abandonHead(() => deadline.promise);
    head.resolve('answered');
    await abandoning;
    expect(window.takeReady()).toEqual(['answered']);
  });

  it('passes on a failure of the head (a bug, not a lookup error) instead of hiding it', async () => {
    const window = new OrderedWindow<string>(10);
    const head = deferred<string>();
    window.addPending(head.promise, () => 'skipped');
    head.reject(new Error('boom'));
    await expect(window.abandonHead(() => new Promise(() => {}))).rejects.toThrow('boom');
    expect(window.pending).toBe(0);
  });

  it('settleAll waits for every pending item, or the deadline', async () => {
    const window = new OrderedWindow<string>(10);
    const a = deferred<string>();
    window.addPending(a.promise, () => 'a?');
    window.addPending(new Promise<string>(() => {}), () => 'b?');
    const deadline = deferred<void>();
    let done = false;
    const settling = window.settleAll(deadline.promise).then(() => (done = true));
    a.resolve('a');
    await tick();
    expect(done).toBe(false);
    deadline.resolve();
    await settling;
    expect(done).toBe(true);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new OrderedWindow(0)).toThrow(/capacity must be a positive integer, got 0/);
  });
});

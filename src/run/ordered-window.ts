// A bounded reorder window (in the spirit of p-queue / p-map, one small named primitive): items
// enter in order, some ready at once and some as promises that settle in any order, and leave in
// the order they entered. The caller stops adding when it is full (back-pressure), and may bound
// separately how many pending items it holds. Items ready at once cost no promise: rows the
// store answers pass through at CSV speed.

interface Slot<T> {
  value: T | undefined;
  pending: Promise<T> | undefined;
  /** What leaves in place of a pending item that is given up (abandonHead), made only then. */
  fallback: (() => T) | undefined;
}

export class OrderedWindow<T> {
  readonly capacity: number;
  #slots: Array<Slot<T>> = [];
  /** Index of the head in #slots (shifting an array of thousands per row would cost). */
  #head = 0;
  #pending = 0;
  #oneSettled: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(capacity: number) {
    if (!(Number.isInteger(capacity) && capacity > 0)) throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
  }

  /** Items in the window, ready or not. */
  get size(): number {
    return this.#slots.length - this.#head;
  }

  /** Items still waiting for their promise. */
  get pending(): number {
    return this.#pending;
  }

  get isFull(): boolean {
    return this.size >= this.capacity;
  }

  /** Adds an item that is ready now. */
  add(value: T): void {
    this.#slots.push({ value, pending: undefined, fallback: undefined });
  }

  /** Adds an item that is ready when `promise` settles; `fallback()` leaves instead if it is given up. */
  addPending(promise: Promise<T>, fallback: () => T): void {
    const slot: Slot<T> = { value: undefined, pending: undefined, fallback };
    this.#pending += 1;
    slot.pending = promise.then(
      (value) => {
        slot.value = value;
        this.#settled();
        return value;
      },
      (error: unknown) => {
        this.#settled();
        throw error;
      },
    );
    this.#slots.push(slot);
  }

  #settled(): void {
    this.#pending -= 1;
    this.#oneSettled?.resolve();
    this.#oneSettled = undefined;
  }

  /** Removes and returns the items ready at the head, in order. */
  takeReady(): T[] {
    const ready: T[] = [];
    const slots = this.#slots;
    while (this.#head < slots.length && slots[this.#head]!.value !== undefined) {
      ready.push(slots[this.#head]!.value!);
      slots[this.#head] = undefined as unknown as Slot<T>;
      this.#head += 1;
    }
    if (this.#head > 1024 && this.#head * 2 > slots.length) {
      this.#slots = slots.slice(this.#head);
      this.#head = 0;
    }
    return ready;
  }

  /** Resolves when the head item settles, or `signal` aborts. Never rejects. */
  waitForHead(signal: AbortSignal): Promise<void> {
    const head = this.#slots[this.#head];
    return head?.pending && head.value === undefined ? untilSettledOrAborted(head.pending, signal) : Promise.resolve();
  }

  /** Resolves when any pending item settles, or `signal` aborts. Never rejects. */
  waitForAnySettled(signal: AbortSignal): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    if (!this.#oneSettled) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.#oneSettled = { promise, resolve };
    }
    return untilSettledOrAborted(this.#oneSettled.promise, signal);
  }

  /**
   * Gives the head until `deadline()` to settle (asked only if it has not yet); if it has not by
   * then, its fallback takes its place.
   * A head that failed (a bug, not a lookup's error: those are outcomes) rejects here.
   */
  async abandonHead(deadline: () => Promise<void>): Promise<void> {
    const head = this.#slots[this.#head];
    if (!head || head.value !== undefined || !head.pending) return;
    const value = await Promise.race([head.pending, deadline().then(() => undefined)]);
    head.value ??= value ?? head.fallback?.();
  }

  /** Gives every pending item until `deadline` (their answers may still be landing in the store). */
  async settleAll(deadline: Promise<void>): Promise<void> {
    const pending = this.#slots.slice(this.#head).flatMap((slot) => (slot.pending && slot.value === undefined ? [slot.pending.catch(() => {})] : []));
    await Promise.race([Promise.allSettled(pending), deadline]);
  }
}

/**
 * Waits for a promise or for the abort, whichever comes first. (Not Promise.race with one
 * long-lived "aborted" promise: every race would leave a reaction on it for the whole run.)
 */
function untilSettledOrAborted(promise: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    promise.then(done, done);
  });
}

// Requests per rate window over a run (the report's chart: the rate used against the limit). One
// number per window of the run's length, not per request or per row: a day at 60-s windows is
// 1,440 numbers. A run with far more windows than a chart can show (a test's tiny window) merges
// neighbours, so memory stays bounded whatever the window.

/** Windows kept at most; beyond, neighbours merge and each bucket spans twice as many windows. */
const MAX_BUCKETS = 4096;

export interface TimelineBucket {
  /** Milliseconds from the timeline's start to the bucket's. */
  startMs: number;
  requests: number;
  /**
   * How long of the bucket requests were being sent: from its start (or the first request) to its
   * end (or the last request). A run shorter than a window sends in part of it only: its rate is
   * of that part, not of a whole window it never lasted.
   */
  spanMs: number;
}

export class RequestTimeline {
  readonly #startedAt: number;
  /** The span of one bucket: the rate window, doubled each time buckets merge. */
  #bucketMs: number;
  readonly #buckets: number[] = [];
  #firstAt: number | undefined;
  #lastAt: number | undefined;

  constructor(startedAt: number, windowMs: number) {
    this.#startedAt = startedAt;
    this.#bucketMs = windowMs;
  }

  /** A request was sent at `now` (epoch ms). */
  note(now: number): void {
    this.#firstAt ??= now;
    this.#lastAt = now;
    let index = Math.max(0, Math.floor((now - this.#startedAt) / this.#bucketMs));
    while (index >= MAX_BUCKETS) {
      this.#merge();
      index = Math.floor(index / 2);
    }
    while (this.#buckets.length <= index) this.#buckets.push(0);
    this.#buckets[index]! += 1;
  }

  #merge(): void {
    const merged: number[] = [];
    for (let i = 0; i < this.#buckets.length; i += 2) merged.push(this.#buckets[i]! + (this.#buckets[i + 1] ?? 0));
    this.#buckets.splice(0, this.#buckets.length, ...merged);
    this.#bucketMs *= 2;
  }

  /** How long one bucket spans (the rate window, unless merged). */
  get bucketMs(): number {
    return this.#bucketMs;
  }

  get startedAt(): number {
    return this.#startedAt;
  }

  /** The buckets up to `until` (epoch ms; those with no request included), oldest first. */
  buckets(until: number): TimelineBucket[] {
    const count = Math.max(this.#buckets.length, Math.min(MAX_BUCKETS, Math.ceil((until - this.#startedAt) / this.#bucketMs)));
    const first = (this.#firstAt ?? this.#startedAt) - this.#startedAt;
    const last = (this.#lastAt ?? this.#startedAt) - this.#startedAt;
    return Array.from({ length: count }, (_, i) => {
      const startMs = i * this.#bucketMs;
      const spanMs = Math.max(0, Math.min(startMs + this.#bucketMs, last) - Math.max(startMs, first));
      return { startMs, requests: this.#buckets[i] ?? 0, spanMs };
    });
  }
}

// The sandbox's simulated latency: seeded, uniform in `latencyMs`, counted from the request's
// arrival and applied before the response is written (the request itself is processed, and
// charged, on arrival). Owns the pending timers so that close() can cancel them.

export class Latency {
  private min: number;
  private max: number;
  private readonly random: () => number;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor([min, max]: [number, number], random: () => number) {
    this.min = min;
    this.max = max;
    this.random = random;
  }

  /** The range of the requests that arrive from now on (setLatency); answers already waiting keep theirs. */
  set([min, max]: [number, number]): void {
    this.min = min;
    this.max = max;
  }

  /** One request's latency in ms. Draws from the stream only when the range is not a point. */
  draw(): number {
    if (this.max === 0) return 0;
    if (this.min === this.max) return this.min;
    return this.min + this.random() * (this.max - this.min);
  }

  /** Runs `fn` once `latency` ms have passed since `arrival` (at once if they already have). */
  after(arrival: number, latency: number, fn: () => void): void {
    const wait = latency - (Date.now() - arrival);
    if (wait <= 0) {
      fn();
      return;
    }
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, wait);
    this.timers.add(t);
  }

  /** Drops every pending answer (the sandbox is closing). */
  cancelAll(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}

// --budget: a cap on what one run spends (all operations), where the credit reserve is a floor
// under the balance. A request starts only when what this run was charged, plus the worst case of
// the requests in flight, plus its own worst case, stays within the cap; the costs counted are the
// guard's upper bounds, so the server never charges the run more than the cap.
export class RunBudget {
  readonly limit: number;
  #spent = 0;
  #inFlight = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** What this run has been charged, as counted against the cap. */
  get spent(): number {
    return this.#spent;
  }

  /** Reserves `cost` for a request, or says no when it could pass the cap. */
  tryBegin(cost: number): boolean {
    if (this.#spent + this.#inFlight + cost > this.limit) return false;
    this.#inFlight += cost;
    return true;
  }

  /** Settles a request that reserved `reserved`: `charged` is what its answer cost (0 for a miss or a failure). */
  finish(reserved: number, charged: number): void {
    this.#inFlight -= reserved;
    this.#spent += charged;
  }
}

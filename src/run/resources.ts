// What a run opened and must release: released in reverse order when the run ends, however it
// ends; what must be undone only when it fails (partial outputs) runs first in that case.
export class Resources {
  readonly #always: Array<() => unknown> = [];
  readonly #onFailure: Array<() => unknown> = [];

  /** Released when the run ends, in reverse order of registration. */
  defer(release: () => unknown): void {
    this.#always.push(release);
  }

  /** Undone only if the run fails. */
  onFailure(undo: () => unknown): void {
    this.#onFailure.push(undo);
  }

  async release(failed: boolean): Promise<void> {
    const steps = [...(failed ? this.#onFailure.splice(0).reverse() : []), ...this.#always.splice(0).reverse()];
    for (const step of steps) {
      try {
        await step();
      } catch {
        // Releasing one resource must not keep the others open.
      }
    }
  }
}

// An answer of the API for one key, as every layer that keeps or passes one holds it: the store
// (StoredResult), the claims of runs and workers (ClaimedAnswer, SharedAnswer), the lookups
// (KeptAnswer) and the history (ReplacedAnswer) extend it rather than declare it again.

export interface Answer {
  /** false = the API answered "not found": a valid (and free) answer worth keeping too. */
  found: boolean;
  /** The JSON `data` object of the API answer, as received (unknown fields kept). */
  data: unknown;
  /** When it was fetched, epoch ms. */
  fetchedAt: number;
  /**
   * The API refused the key (400: the key is malformed in its eyes, `bad_request`): why. An answer
   * about the key like a miss, kept so that a re-run does not send it again; `found` is false.
   */
  refused?: string | undefined;
}

// One concept, two backends (docs/cli-contract.md, "Durability"): a key that one run, or one worker, is
// looking up is claimed, and the others wait for its answer instead of paying for it again; a
// claim whose holder died lapses. Runs on one machine sharing a store claim in the store's file
// (store-key-claims.ts); workers with --redis claim in Redis (the coordinator), across machines.
// shared-lookup.ts is the one algorithm over either.
import type { LeadEnrichError } from '../api/errors.js';
import type { Answer } from '../core/answer.js';
import type { Coordinator } from '../cluster/coordinator.js';

/** An answer another run or worker has for a key, with when it was fetched (epoch ms). */
export type ClaimedAnswer = Answer;

export interface KeyClaims {
  /** The answer another run or worker already has for the key, if any. */
  answer(op: string, key: string): Promise<ClaimedAnswer | undefined>;
  /** True when this run may look the key up; false while another holds it. */
  claim(op: string, key: string): Promise<boolean>;
  /** This run's answer to a key it claimed: shared where the others look, and the claim goes. */
  answered(op: string, key: string, answer: ClaimedAnswer): Promise<void>;
  /** The lookup of a claimed key failed: the claim goes at once (a waiting run tries the key itself). */
  release(op: string, key: string): Promise<void>;
  /** The backend failed (Redis lost, the store's disk full): what the row's error is; the run is told. */
  fail(error: unknown): LeadEnrichError;
}

/** Claims and answers in Redis, shared by every worker of the account (cluster/shared-answers.ts). */
export function redisClaims(coordinator: Coordinator): KeyClaims {
  return {
    answer: (op, key) => coordinator.sharedAnswer(op, key),
    claim: (op, key) => coordinator.claim(op, key),
    // A refused key is not shared through Redis (each worker's store keeps it): the claim just goes.
    answered: (op, key, answer) => (answer.refused === undefined ? coordinator.publishAnswer(op, key, answer) : coordinator.release(op, key)),
    release: (op, key) => coordinator.release(op, key),
    fail: (error) => coordinator.fail(error),
  };
}

// The sandbox's own books, kept when asked (`answerLog`): every keyed answer it sent, found or not,
// with when it was sent, at which drift epoch, and what it charged. A test that runs a client for
// many days checks the client's ledger, store and budgets against these, the service's side of
// every charge: a run killed mid-way leaves its calls here even when it recorded none of them.
import type { SandboxKeyOperation } from './keys.js';

/** One keyed answer as the sandbox sent it. */
export interface ServedAnswer {
  /** When the request was answered (epoch ms, the sandbox's clock): when it was charged. */
  at: number;
  op: SandboxKeyOperation;
  /** The normalized key. */
  key: string;
  found: boolean;
  /** What it charged (0 when nothing was found). */
  credits: number;
  /** The drift epoch it answered at (nextDay() calls since the start, plus the `epoch` option). */
  epoch: number;
}

/** What the sandbox answers for a key at an epoch, without a request: no charge, no count. */
export interface SandboxTruth {
  kind: 'found' | 'not_found' | 'rejected';
  /** The normalized key. */
  key: string;
  /** The envelope's `data` as it would be sent (undefined when rejected, or for a not-found shape without one). */
  data: unknown;
  /** What the answer would charge. */
  credits: number;
}

/*
 * Sandbox data rules (deterministic synthetic answers)
 * ====================================================
 *
 * Every answer is a pure function of the operation and the normalized key, so the same key gives
 * the same data from any sandbox, in any process, at any time, and tests can compute the expected
 * answer without HTTP (`normalizeSandboxKey` + `sandboxAnswer`; the server uses exactly these).
 * This file decides the outcome; the rules it draws on live beside it:
 * - keys.ts: key normalization and the rejections (400);
 * - leads.ts: the found data, field by field;
 * - account-data.ts: myplans, credits, limits and the costs of a found answer.
 *
 * Outcome, checked in this order on the normalized key:
 * 1. 400 (rejected, with `reasons`): the rules of keys.ts.
 * 2. Not found (200, `lead: {}`, costs nothing): any key containing `notfound`; for MX also any
 *    domain containing `nomx` (answered with `mx_records: []`). For the three reverse lookups
 *    (not MX or Whois) also every key whose hash bucket falls below `notFoundRate` (default 0.1):
 *    bucket = first 4 bytes of sha1(normalized key) as an unsigned big-endian integer / 2^32.
 *    A Whois "not found" answers `whoisRecord: {}`.
 * 3. Otherwise found; the data is derived from sha1(normalized key) (leads.ts). With `drift`, a
 *    person (email and URL lookups) may have moved since, or left (not found): drift.ts.
 *
 * `data` echoes the normalized key: email lookups `{ email_address, lead }`, domain lookups
 * `{ name, lead }`, URL lookups `{ lead }`.
 */

import { sandboxKeyRejection, type SandboxDataByOperation, type SandboxKeyOperation, type KeyRejectionReason } from './keys.js';
import { companyLead, Digest, emailPersonLead, mxResult, urlPersonLead, whoisResult } from './leads.js';
import { driftedPerson } from './drift.js';

// The names this module has always offered, now defined beside it.
export {
  isSandboxKeyOperation,
  normalizeSandboxKey,
  SANDBOX_KEY_OPERATIONS,
  SANDBOX_KEY_PARAMS,
  validationReason,
  type SandboxDataByOperation,
  type SandboxKeyOperation,
  type KeyRejectionReason,
} from './keys.js';
export { sandboxCompanyName } from './leads.js';
export {
  DEFAULT_SANDBOX_COSTS,
  sandboxCost,
  sandboxCredits,
  sandboxLimits,
  sandboxPlans,
  type SandboxCosts,
} from './account-data.js';

export type SandboxAnswer<O extends SandboxKeyOperation = SandboxKeyOperation> =
  | { kind: 'found'; data: SandboxDataByOperation[O] }
  | { kind: 'not_found'; data: SandboxDataByOperation[O] }
  | { kind: 'rejected'; reasons: KeyRejectionReason[] };

export interface SandboxAnswerOptions {
  /** Fraction of ordinary reverse-lookup keys answered "not found" (hash bucket). Default 0.1. */
  notFoundRate?: number;
  /** The share of found people who change jobs at each epoch (drift.ts). Default 0: none. */
  drift?: number;
  /** Epochs passed: the sandbox's nextDay() calls since its start, plus its `epoch` option. Default 0. */
  epoch?: number;
}

export const DEFAULT_NOT_FOUND_RATE = 0.1;

/**
 * The sandbox's answer for a normalized key (rules at the top of this file). Pure: no clock, no
 * state. `data` is what the server sends as the envelope's `data`.
 */
export function sandboxAnswer<O extends SandboxKeyOperation>(op: O, normalizedKey: string, options: SandboxAnswerOptions = {}): SandboxAnswer<O> {
  const notFoundRate = options.notFoundRate ?? DEFAULT_NOT_FOUND_RATE;
  const drift = { drift: options.drift ?? 0, epoch: options.epoch ?? 0 };
  const key = normalizedKey;
  const rejection = sandboxKeyRejection(op, key);
  if (rejection !== undefined) return { kind: 'rejected', reasons: [rejection] };

  const marked = key.includes('notfound');
  const d = new Digest(key);
  // The casts below are safe: each branch builds the data type of its own `op`.
  type A = SandboxAnswer<O>;
  switch (op as SandboxKeyOperation) {
    case 'lookup_email': {
      const lead = marked || d.bucket() < notFoundRate ? undefined : driftedPerson(emailPersonLead(d, key), key, drift);
      return { kind: lead ? 'found' : 'not_found', data: { email_address: key, lead: lead ?? {} } } as A;
    }
    case 'lookup_url': {
      const lead = marked || d.bucket() < notFoundRate ? undefined : driftedPerson(urlPersonLead(d, key), key, drift);
      return { kind: lead ? 'found' : 'not_found', data: { lead: lead ?? {} } } as A;
    }
    case 'lookup_domain': {
      if (marked || d.bucket() < notFoundRate) return { kind: 'not_found', data: { name: key, lead: {} } } as A;
      return { kind: 'found', data: { name: key, lead: companyLead(d, key) } } as A;
    }
    case 'mx': {
      const empty = marked || key.includes('nomx');
      return { kind: empty ? 'not_found' : 'found', data: mxResult(d, key, empty) } as A;
    }
    case 'whois':
      return { kind: marked ? 'not_found' : 'found', data: whoisResult(d, key, marked) } as A;
  }
  throw new Error(`sandboxAnswer: unknown operation ${String(op)}`);
}

// Fault injection for the sandbox: the transport-level failures docs/api-behaviour-notes.md says the real
// server produces ("Error bodies": 5xx, 503 with no body, errors with HTTP 200, non-JSON bodies)
// plus connection failures. A faulted request is not processed: not authenticated, not counted
// against the rate window, not charged.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { refused } from '../options/refusal.js';

export type FaultKind = 'error500' | 'error503' | 'reset' | 'truncated' | 'failed200' | 'hang';

/** Fixed order: the cumulative draw in pickFault walks this list. */
export const FAULT_KINDS: readonly FaultKind[] = ['error500', 'error503', 'reset', 'truncated', 'failed200', 'hang'];

export type FaultRates = Record<FaultKind, number>;

export function emptyFaultCounts(): FaultRates {
  return { error500: 0, error503: 0, reset: 0, truncated: 0, failed200: 0, hang: 0 };
}

/** Validates per-request probabilities: known kinds, each in [0, 1], summing to at most 1. */
export function validateFaults(faults: unknown, label = 'faults'): FaultRates {
  const out = emptyFaultCounts();
  if (faults === undefined) return out;
  if (faults === null || typeof faults !== 'object' || Array.isArray(faults)) {
    throw refused('sandbox', label, 'must be an object of fault probabilities', faults);
  }
  let sum = 0;
  for (const [kind, p] of Object.entries(faults)) {
    if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
      throw refused('sandbox', `${label}.${kind}`, `unknown fault kind (expected one of ${FAULT_KINDS.join(', ')})`, kind);
    }
    if (p === undefined) continue;
    if (typeof p !== 'number' || !Number.isFinite(p) || p < 0 || p > 1) {
      throw refused('sandbox', `${label}.${kind}`, 'must be a probability between 0 and 1', p);
    }
    out[kind as FaultKind] = p;
    sum += p;
  }
  if (sum > 1 + 1e-9) {
    throw refused('sandbox', label, 'probabilities must sum to at most 1', sum);
  }
  return out;
}

/**
 * Draws one fault (or none) for a request. Draws from `random` only when some probability is
 * non-zero, so fault-free runs leave the stream untouched.
 */
export function pickFault(rates: FaultRates, random: () => number, anyFault: boolean): FaultKind | undefined {
  if (!anyFault) return undefined;
  const r = random();
  let acc = 0;
  for (const kind of FAULT_KINDS) {
    acc += rates[kind];
    if (r < acc) return kind;
  }
  return undefined;
}

/** Step 1 of the server's order: the current fault probabilities and their seeded stream. */
export class FaultInjector {
  private rates: FaultRates;
  private anyFault: boolean;
  private readonly random: () => number;

  constructor(rates: FaultRates, random: () => number) {
    this.rates = rates;
    this.anyFault = Object.values(rates).some((p) => p > 0);
    this.random = random;
  }

  /** Replaces the probabilities (kinds not named become 0); validated like the option. */
  setRates(faults: unknown): void {
    this.rates = validateFaults(faults);
    this.anyFault = Object.values(this.rates).some((p) => p > 0);
  }

  /** The fault for the request that just arrived, or undefined. */
  pick(): FaultKind | undefined {
    return pickFault(this.rates, this.random, this.anyFault);
  }
}

const ERROR_500 = JSON.stringify({ status: 'failed', error: { code: 500, message: 'Internal Server Error' } });
const FAILED_200 = JSON.stringify({ status: 'failed', error: { code: 1099, message: 'Temporary failure, please retry' } });
/** A plausible success body; the truncated fault sends its first half. */
const TRUNCATED_SOURCE = JSON.stringify({
  status: 'success',
  data: {
    email_address: 'truncated@sandbox.example',
    lead: { id: '000000000000000000000000', type: 'person', name: 'Truncated Response', addresses: [] },
  },
});
const TRUNCATED_RAW =
  'HTTP/1.1 200 OK\r\n' +
  'Content-Type: application/json; charset=utf-8\r\n' +
  'Connection: close\r\n' +
  '\r\n' +
  TRUNCATED_SOURCE.slice(0, Math.floor(TRUNCATED_SOURCE.length / 2));

/**
 * Carries out a fault on a request that has not been answered.
 * - error500: 500 with an error body; error503: 503 with no body; failed200: HTTP 200 whose body
 *   says `"status":"failed"` (code 1099).
 * - reset: the socket is destroyed without an answer.
 * - truncated: a 200 framed by connection close (no Content-Length, no chunking) whose JSON body
 *   is cut in half, then the socket ends: the client sees a "complete" 200 that is not JSON.
 * - hang: nothing is ever sent; the socket stays open until the client gives up or the sandbox
 *   closes.
 */
export function applyFault(kind: FaultKind, req: IncomingMessage, res: ServerResponse): void {
  switch (kind) {
    case 'error500':
      res.writeHead(500, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(ERROR_500),
      });
      res.end(ERROR_500);
      return;
    case 'error503':
      res.writeHead(503, { 'content-length': 0 });
      res.end();
      return;
    case 'failed200':
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(FAILED_200),
      });
      res.end(FAILED_200);
      return;
    case 'reset':
      req.socket.destroy();
      return;
    case 'truncated':
      // Written on the raw socket: ServerResponse would add a Content-Length or chunked framing.
      req.socket.end(TRUNCATED_RAW);
      return;
    case 'hang':
      return;
  }
}

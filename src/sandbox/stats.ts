// What the sandbox counts, as one live object the tests and benchmarks read while it runs. The
// server loop, the rate window and the account each update their own counters in it.

import { SANDBOX_OPERATION_PATHS } from './operation-paths.js';
import { emptyFaultCounts, type FaultKind } from './faults.js';

export interface SandboxWindowStats {
  /** Window start, epoch ms. */
  start: number;
  /** Every request received during the window (faulted and unauthorized ones included). */
  requests: number;
  /** Requests that passed the rate check. */
  accepted: number;
  /** 429s sent. */
  limited: number;
}

export interface SandboxStats {
  /** Every HTTP request received. */
  requests: number;
  /** By Operation (src/api/types.ts), plus 'unknown' for any other method/path. */
  byOperation: Record<string, number>;
  rateLimited: number;
  unauthorized: number;
  paymentRequired: number;
  creditsCharged: number;
  /** `${operation}:${normalizedKey}` -> number of found (billable) answers sent for it. */
  charges: Map<string, number>;
  /** `${operation}:${normalizedKey}` -> when it was last charged (epoch ms): its answer leaves then, or latencyMs later. */
  chargedAt: Map<string, number>;
  faults: Record<FaultKind, number>;
  /** Requests received while an outage was on (outage.ts), in all and of lookups and domain helpers. */
  outage: { requests: number; lookups: number };
  /** One entry per fixed rate window that received at least one request, oldest first. */
  windows: SandboxWindowStats[];
}

/** Every counter at zero, with a slot per operation (and 'unknown'). */
export function createSandboxStats(): SandboxStats {
  const byOperation: Record<string, number> = { unknown: 0 };
  for (const op of Object.keys(SANDBOX_OPERATION_PATHS)) byOperation[op] = 0;
  return {
    requests: 0,
    byOperation,
    rateLimited: 0,
    unauthorized: 0,
    paymentRequired: 0,
    creditsCharged: 0,
    charges: new Map(),
    chargedAt: new Map(),
    faults: emptyFaultCounts(),
    outage: { requests: 0, lookups: 0 },
    windows: [],
  };
}

// What looking up one key came to: an answer (found or not, and how it was billed), or the
// reason there is none, with the sidecar's stable code (docs/cli-contract.md, "The error sidecar").
import { isLeadFound } from '../api/client.js';
import type { ErrorCode, LeadEnrichError } from '../api/errors.js';
import type { Answer } from '../core/answer.js';
import type { BillableOperation } from './credits.js';
import { stopOf, type StopReason } from './stops.js';

import type { Billing, EarlierAnswer } from '../core/rows.js';

export type { Billing } from '../core/rows.js';

export interface Answered {
  kind: 'found' | 'not_found';
  data: unknown;
  billing: Billing;
  /** The answer's own columns as the store keeps them (write/stored-cells.ts), when the run wants cells, not parsed answers. */
  cellsRecord?: string | undefined;
  /** This run looked the key up again: what it answered before. */
  earlier?: EarlierAnswer | undefined;
  /** With billing `stale`: the stored answer older than --max-age that this run could not look up again, and why (what the lookup came to). */
  stale?: Unanswered | undefined;
}
export interface Unanswered {
  kind: 'error' | 'skipped';
  /** Stable lower-case word for the sidecar: an error class's code, `credit_reserve`, `interrupted`, ... */
  code: ErrorCode;
  message: string;
  billing: 'none';
  /** The answer (a refusal) was kept by an earlier run or another worker: no request of this run made it. */
  stored?: true | undefined;
  /** The failure the outcome came from (an API's answer, a network's, Redis lost): its class, status and apiCode. */
  failure?: LeadEnrichError | undefined;
}
export type LookupOutcome = Answered | Unanswered;

/** An answer as the store keeps it; when it was fetched, where the one who kept it says. */
export interface KeptAnswer extends Omit<Answer, 'fetchedAt'> {
  fetchedAt?: number;
}

/** A key the API refused (400): the row's `error` with `bad_request`, its own problem, not the API's. */
export function refusedOutcome(message: string, failure?: LeadEnrichError): Unanswered {
  return failure ? { kind: 'error', code: 'bad_request', message, billing: 'none', failure } : { kind: 'error', code: 'bad_request', message, billing: 'none' };
}

export function isAnswered(outcome: LookupOutcome): outcome is Answered {
  return outcome.kind === 'found' || outcome.kind === 'not_found';
}

/** The answer of a key another row of this run asked first: a stale one stays stale (it is the same stored answer). */
export function asDuplicate(outcome: LookupOutcome): LookupOutcome {
  return isAnswered(outcome) && outcome.billing !== 'stale' ? { ...outcome, billing: 'duplicate' } : outcome;
}

/**
 * Whether an answer found something, which is what the API bills (docs/api-behaviour-notes.md, "Credits": a
 * lookup that finds nothing costs nothing). A person or company lookup: its lead is not empty. An
 * MX answer: it lists at least one record (`mx_records: []` left the balance where it was, measured
 * on the sandbox: test/billing-words.test.ts). A Whois answer: its record is not empty
 * (`whoisRecord: {}` is the interface's miss).
 */
export function foundIn(op: BillableOperation, data: unknown): boolean {
  const answer = (data ?? {}) as { mx_records?: unknown; whoisRecord?: unknown };
  if (op === 'mx') return Array.isArray(answer.mx_records) && answer.mx_records.length > 0;
  if (op === 'whois') return isNonEmptyObject(answer.whoisRecord);
  return isLeadFound(data as { lead?: unknown });
}

function isNonEmptyObject(value: unknown): boolean {
  return value !== null && typeof value === 'object' && Object.keys(value).length > 0;
}

/** What a lookup turned away by a stop becomes: its row of the stops table (stops.ts); the message read when the row is written (the option named as the reader gave it). */
export function stoppedRow(reason: StopReason): Unanswered {
  const row = stopOf(reason).row;
  return {
    kind: row.kind,
    code: row.code,
    get message() {
      return row.message();
    },
    billing: 'none',
  };
}

export const INTERRUPTED = stoppedRow('interrupt');
export const RESERVE = stoppedRow('credits');
export const MAX_ERRORS = stoppedRow('max_errors');
export const API_UNAVAILABLE = stoppedRow('api_unavailable');
export const DAILY_LIMIT = stoppedRow('daily_limit');
export const BUDGET = stoppedRow('budget');

// An answer as the store holds it, and the rows it is read from: the types and the one function
// that turns a row into a StoredResult (result-store.ts reads and writes them).
import type { Operation } from '../api/types.js';
import type { Answer } from '../core/answer.js';

export interface StoredResult extends Answer {
  /** The run that fetched it: lets the pipeline tell "duplicate in this run" from "cached before". */
  runId: string;
  /**
   * With getMany(…, layout): the answer's own added columns as one record, rendered by the caller
   * (store/answer-cells.ts);
   * `data` is then undefined. Absent for an operation with no such columns, or when asked for data.
   */
  cellsRecord?: string | undefined;
}

export interface Pending {
  service: string;
  op: Operation;
  key: string;
  found: boolean;
  /** JSON text, serialized at put() time so later changes to the caller's object are not stored. */
  json: string | null;
  /** The answer's cells as the caller rendered them (`<layout>,<record>`), or null. */
  cells: string | null;
  /** Why the API refused the key, or null. */
  refused: string | null;
  fetchedAt: number;
  runId: string;
}

export type ResultRow = [found: number, data: string | null, fetchedAt: number, runId: string, refused: string | null];
export type ManyRow = [key: string, found: number, cells: string | null, data: string | null, fetchedAt: number, runId: string, refused: string | null];
/**
 * A stored answer from its columns: its cells record when there is one, else the parsed data.
 * Undefined when the data is not JSON (a file edited or damaged by hand): that one answer is
 * absent, and looked up again, rather than the whole store refused (`store check` names them).
 */
export function storedOf(
  found: boolean,
  cellsRecord: string | undefined,
  json: string | null,
  fetchedAt: number,
  runId: string,
  refused: string | null,
): StoredResult | undefined {
  if (typeof refused === 'string') return { found: false, data: undefined, fetchedAt, runId, refused };
  if (cellsRecord !== undefined) return { found, data: undefined, fetchedAt, runId, cellsRecord };
  if (json === null) return { found, data: undefined, fetchedAt, runId };
  const data = parsedOrUndefined(json);
  return data === undefined ? undefined : { found, data, fetchedAt, runId };
}

/** An answer that is not JSON is absent (storedOf): looked up again. */
export function setStored(found: Map<string, StoredResult>, key: string, stored: StoredResult | undefined): void {
  if (stored === undefined) found.delete(key);
  else found.set(key, stored);
}

/** JSON text parsed, or undefined when it is not JSON. */
export function parsedOrUndefined(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

// Unit separator: cannot appear in a normalized key, service name or operation.
export function pendingKey(service: string, op: string, key: string): string {
  return `${service}\u001f${op}\u001f${key}`;
}

/**
 * How fresh a stored answer must be: fetched at most this many ms ago, or at or after `since` (a run
 * judges ages once, as it begins: run/open-run.ts).
 */
export type Freshness = number | { since: number };

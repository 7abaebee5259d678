// --changes in a run: every change its file lists is reported once (docs/cli-contract.md, "Reported
// once, never absorbed"). Beside its own changes (the keys it looked up again), the file lists the
// changes earlier runs stored and no file listed (the store's report: store/change-report.ts), at
// the first row where their key stands, and after the rows (with an empty `row`) those of keys no
// row stands for. Each change a row's lines cover is recorded as the row is written, and all are
// marked reported once the file is in place: a run that dies before leaves them to the next.
import { StoreFailedError } from '../api/errors.js';
import type { Operation } from '../api/types.js';
import type { Extra } from '../core/kinds.js';
import type { FinishedRow } from '../core/rows.js';
import { LOOKUP_OPERATION, type LookupTarget } from '../plan/plan.js';
import type { ChangeReport } from '../store/change-report.js';
import { changeRecordsOf, type AnswerChanges, type Part } from '../write/answer-changes.js';
import type { RowSink } from '../write/row-writer.js';

/** The changes of earlier runs this run's file listed (summary: `carriedOver`). */
export interface CarriedCounts {
  /** Keys with at least one line. */
  keys: number;
  lines: number;
  /** Of those keys, the ones no row of this run stands for (their lines have an empty `row`). */
  keysNotInFile: number;
}

export class ChangeListing {
  readonly report: ChangeReport;
  readonly #changes: AnswerChanges;
  /** The lookups whose changes this run compares, by operation: the row's own, and each --with. */
  readonly #parts: ReadonlyMap<Operation, Part>;
  readonly #counts: CarriedCounts = { keys: 0, lines: 0, keysNotInFile: 0 };

  constructor(report: ChangeReport, changes: AnswerChanges, targets: readonly LookupTarget[], extras: readonly Extra[]) {
    this.report = report;
    this.#changes = changes;
    const parts = new Map<Operation, Part>();
    for (const extra of extras) parts.set(extra === 'company' ? 'lookup_domain' : extra, extra);
    for (const target of targets) parts.set(LOOKUP_OPERATION[target.kind] as Operation, 'lead');
    this.#parts = parts;
  }

  get counts(): Readonly<CarriedCounts> {
    return this.#counts;
  }

  /** Sets the row's changes (AnswerChanges) and records the changes its lines cover. */
  apply(row: FinishedRow): void {
    this.#changes.apply(row);
    if (row.earlier) {
      for (const then of Object.values(row.earlier)) if (then && !then.same) this.report.listed(then.op, then.key, then.refetchedAt);
    }
    if (!row.carried) return;
    const keys = new Set<string>();
    for (const changes of Object.values(row.carried)) for (const change of changes ?? []) this.report.listed(change.op, change.key, change.refetchedAt);
    for (const change of row.carriedChanges ?? []) keys.add(change.key);
    this.#count(keys.size, row.carriedChanges?.length ?? 0, false);
  }

  /**
   * After the rows: the carried changes of the keys no row stood for, with an empty `row`. A store
   * that cannot be read now costs the run nothing else: those are left to the next run, and said.
   */
  async listRest(writer: RowSink, warn: (line: string) => void): Promise<void> {
    try {
      await this.#listRest(writer);
    } catch (error) {
      if (!(error instanceof StoreFailedError)) throw error;
      warn(`the changes stored before this run for keys not in this file could not be listed (${error.message}): the next run with --changes lists them`);
    }
  }

  async #listRest(writer: RowSink): Promise<void> {
    for (const changes of this.report.rest(new Set(this.#parts.keys()))) {
      const first = changes[0]!;
      const lines = changeRecordsOf(0, this.#changes.alone(this.#parts.get(first.op)!, changes));
      for (const change of changes) this.report.listed(change.op, change.key, change.refetchedAt);
      if (lines.length === 0) continue;
      this.#count(1, lines.length, true);
      const drained = writer.writeChangeLines?.(lines);
      if (drained) await drained;
    }
  }

  /**
   * The file is in place: what it lists is reported. A store that cannot be written now leaves them
   * unreported (the next run with --changes lists them again), and says so.
   */
  markReported(warn: (line: string) => void): void {
    try {
      this.report.markReported();
    } catch (error) {
      warn(`the changes in the --changes file could not be marked as reported (${(error as Error).message}): the next run with --changes lists them again`);
    }
  }

  #count(keys: number, lines: number, notInFile: boolean): void {
    this.#counts.keys += keys;
    this.#counts.lines += lines;
    if (notInFile) this.#counts.keysNotInFile += keys;
  }
}

// Which rows need no lookup because the cells a run would fill already hold values (docs/cli-contract.md,
// "Filling the input's own columns"): `--fill` columns (unless --overwrite) and `--only-missing`
// columns. Such a row is `skipped` with `complete`: never requested, billed nothing, not an error.

/** Blank: empty, or only spaces (a byte string: an ASCII space or tab is the same byte in any encoding read here). */
export function isBlank(cell: string | undefined): boolean {
  return cell === undefined || cell.trim() === '';
}

/** The columns whose cells, all non-blank, make a row complete, and what its sidecar line says. */
export interface CompleteRule {
  /** Column indices in the input. */
  columns: readonly number[];
  /** The sidecar's error_message of a complete row. */
  message: string;
}

export function completeRule(columns: readonly number[], names: readonly string[]): CompleteRule {
  const named = names.join(', ');
  return { columns, message: `not looked up: ${named} already ${names.length === 1 ? 'holds a value' : 'hold values'}` };
}

/** Whether every cell of the rule's columns holds a value. */
export function isComplete(cells: readonly string[], rule: CompleteRule): boolean {
  for (const column of rule.columns) if (isBlank(cells[column])) return false;
  return true;
}

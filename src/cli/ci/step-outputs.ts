// The step's outputs, appended to the file $GITHUB_OUTPUT names, so that a later step reads
// `steps.<id>.outputs.found` (docs/cli-contract.md, "In a CI step"). Each is written in the form
// GitHub documents for a value of several lines, `name<<DELIMITER`, the value, `DELIMITER`, with a
// delimiter the value does not hold (as @actions/core's setOutput writes them): a path holding a
// line break cannot end its value early or set an output of its own.
import { randomUUID } from 'node:crypto';
import type { EnrichSummary } from '../../run/summary.js';

export type StepOutputs = Record<string, string | number>;

/** The outputs of a finished run: its exit status, counts and the paths it wrote (empty when not written). */
export function runOutputs(s: EnrichSummary, exitCode: number): StepOutputs {
  const file = (path: string | undefined) => (path === undefined || path === '-' || path === '(stream)' ? '' : path);
  return {
    'exit-code': exitCode,
    code: '',
    rows: s.rows,
    found: s.status.found,
    'not-found': s.status.not_found,
    errors: s.status.error,
    skipped: s.status.skipped,
    'credits-spent': s.credits.spent,
    changed: s.changed?.rows ?? 0,
    output: file(s.output),
    'errors-file': file(s.errorsFile),
    report: file(s.report),
    changes: file(s.changesFile),
  };
}

/** The outputs of a fatal failure: its exit status and code; no row was written. */
export function fatalOutputs(fatal: { status: number; code: string }): StepOutputs {
  const none = { rows: 0, found: 0, 'not-found': 0, errors: 0, skipped: 0, 'credits-spent': 0, changed: 0 };
  return { 'exit-code': fatal.status, code: fatal.code, ...none, output: '', 'errors-file': '', report: '', changes: '' };
}

/** The outputs as $GITHUB_OUTPUT takes them. */
export function outputsText(outputs: StepOutputs): string {
  return Object.entries(outputs)
    .map(([name, value]) => {
      const text = String(value);
      let delimiter = `ghadelimiter_${randomUUID()}`;
      while (text.includes(delimiter)) delimiter = `ghadelimiter_${randomUUID()}`;
      return `${name}<<${delimiter}\n${text}\n${delimiter}\n`;
    })
    .join('');
}

// What a command may do to the outside world: write, warn, and report its exit status.
// Only cli-process.ts turns that status into process.exit.
import { jsonText } from '../core/terminal-text.js';
import { VERSION } from './version.js';

export interface CliIo {
  /** Text for stdout (a table, JSON, an export's lines): its control characters are shown escaped, line feeds kept (core/terminal-text.ts). */
  out(text: string): void;
  /** Resolves once what out() was given has been handed over, when stdout holds more than it wants (a pipe read slowly): flat memory for long outputs. */
  drained?(): Promise<void> | undefined;
  /**
   * One line for stderr, written as it is: whoever makes it escapes the data in it (noticeLines,
   * cli-process.ts' fatal line, the summary), so that the summary may carry its colour.
   */
  err(line: string): void;
  setStatus(status: number): void;
  isTty: boolean;
  /**
   * A workflow command lead-enrich means (cli/ci/: an annotation, a log group), for stderr as it
   * is: neither stamped nor escaped, as every other line is (core/log-lines.ts).
   */
  command?(line: string): void;
  /** Told of a fatal failure once its line is out (cli/ci/: the job summary and its annotation). */
  onFatal?: ((fatal: { status: number; code: string; message: string }) => Promise<void>) | undefined;
  /**
   * With --json: where the one JSON object of the outcome goes, whatever it is (docs/cli-contract.md,
   * "Every night, unattended"): stdout, or stderr as one line when the rows go to stdout.
   */
  json?: 'out' | 'err' | undefined;
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(`${jsonText(value, 2)}\n`);
}

/** The outcome's JSON where --json sends it (CliIo.json), led by the exit status and the version, as every outcome's. */
export function writeOutcome(io: CliIo, exitCode: number, body: object): void {
  const value = { exitCode, version: VERSION, ...body };
  if (io.json === 'err') io.err(jsonText(value));
  else printJson(io, value);
}

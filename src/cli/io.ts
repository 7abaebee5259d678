// What a command may do to the outside world: write, warn, and report its exit status.
// Only main.ts turns that status into process.exit.
export interface CliIo {
  out(text: string): void;
  err(line: string): void;
  setStatus(status: number): void;
  isTty: boolean;
  /**
   * With --json: where the one JSON object of the outcome goes, whatever it is (docs/cli-contract.md,
   * "Every night, unattended"): stdout, or stderr as one line when the rows go to stdout.
   */
  json?: 'out' | 'err' | undefined;
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** The outcome's JSON where --json sends it (CliIo.json). */
export function writeOutcome(io: CliIo, value: unknown): void {
  if (io.json === 'err') io.err(JSON.stringify(value));
  else printJson(io, value);
}

// What a command may do to the outside world: write, warn, and report its exit status.
// Only main.ts turns that status into process.exit.
export interface CliIo {
  out(text: string): void;
  err(line: string): void;
  setStatus(status: number): void;
  isTty: boolean;
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value, null, 2)}\n`);
}

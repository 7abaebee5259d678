// A yes/no question to the person at the terminal (store clear, a costly run): never asked where
// no one is there to answer (cron, CI, a pipe).
import readline from 'node:readline';

/** Asks a question in a terminal and resolves with the answer; undefined when there is no terminal to ask in. */
export type AskUser = (question: string) => Promise<string> | undefined;

/** The question on stderr, the answer from stdin: only when both are a terminal (a person is there). */
export const askOnTerminal: AskUser = (question) => {
  if (!process.stdin.isTTY || !process.stderr.isTTY) return undefined;
  const prompt = readline.createInterface({ input: process.stdin, output: process.stderr });
  return new Promise<string>((resolve) => {
    // Ctrl-C, Ctrl-D or a closed terminal: no answer, so "no".
    prompt.once('close', () => resolve(''));
    prompt.once('SIGINT', () => prompt.close());
    prompt.question(question, (answer) => {
      resolve(answer);
      prompt.close();
    });
  });
};

/** "y" or "yes", whatever the case and spaces around it. */
export function saidYes(answer: string): boolean {
  return /^\s*y(es)?\s*$/i.test(answer);
}

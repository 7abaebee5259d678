// vitest's `it` for tests of messages as the command line's user reads them: each test body runs as a
// command does, inside speakingTo('cli', ...) (src/api/caller-words.ts), so that what it makes, now
// or in its async work, names --flags and LEAD_API_* where a program's words name options.
import { it as vitestIt } from 'vitest';
import { speakingTo } from '../../src/api/caller-words.js';

type Body = (...args: never[]) => unknown;

const inCliWords =
  (body: Body): Body =>
  (...args) =>
    speakingTo('cli', () => body(...args));

/** The arguments of a test with its body (after the name, and any options object) run in the command line's words. */
const withBody = (args: unknown[]): unknown[] => {
  const at = args.findIndex((arg, i) => i > 0 && typeof arg === 'function');
  return at < 0 ? args : args.map((arg, i) => (i === at ? inCliWords(arg as Body) : arg));
};

function wrapped(base: typeof vitestIt): typeof vitestIt {
  const call = base as unknown as (...args: unknown[]) => unknown;
  const it = ((...args: unknown[]) => call(...withBody(args))) as unknown as typeof vitestIt;
  const each =
    (...table: unknown[]) =>
    (...args: unknown[]) =>
      (base.each as unknown as (...t: unknown[]) => (...a: unknown[]) => unknown)(...table)(...withBody(args));
  return Object.assign(it, {
    each,
    skipIf: (condition: unknown) => wrapped(base.skipIf(condition)),
    runIf: (condition: unknown) => wrapped(base.runIf(condition)),
  }) as typeof vitestIt;
}

export const it = wrapped(vitestIt);

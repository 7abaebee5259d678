// Who a message speaks to (docs/cli-contract.md, "Library"): a program, which passed options named
// `token`, `baseUrl`, `by`, `column`; or the command line's user, who set LEAD_API_TOKEN and typed
// --base-url, --by, --column. A message names what to change as its reader gave it. The command
// line runs each command inside speakingTo('cli', ...) (cli/commands.ts); everything that command
// does, down to its last request's callbacks, speaks to its user (an AsyncLocalStorage follows the
// work through awaits, timers and sockets). Anything else in the same process speaks a program's
// words: a library call beside a command (the simulation runs both in one process, so do tests)
// is not worded by it. No process-wide switch.
import { AsyncLocalStorage } from 'node:async_hooks';

export type Caller = 'cli' | 'library';

const scope = new AsyncLocalStorage<Caller>();

/** Runs `work` with every message it makes, now or later in its async work, speaking to `caller`. */
export function speakingTo<T>(caller: Caller, work: () => T): T {
  return scope.run(caller, work);
}

/** Who the messages made here speak to: the command line's user inside a command, else a program. */
export function caller(): Caller {
  return scope.getStore() ?? 'library';
}

/** The words of `words` for the reader at hand. */
export function said(words: Readonly<Record<Caller, string>>): string {
  return words[caller()];
}

/** Where the token is given, as the reader gave it. */
export const TOKEN_GIVEN = { cli: 'LEAD_API_TOKEN, or token / tokenFile in the config file', library: 'the token option' } as const;

/** The option holding the API's base URL, as the reader gave it. */
export const BASE_URL_GIVEN = { cli: '--base-url', library: 'baseUrl' } as const;

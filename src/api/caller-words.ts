// Who a message speaks to (docs/cli-contract.md, "Library"): a program, which passed options named
// `token`, `baseUrl`, `by`, `column`; or the command line's user, who set LEAD_API_TOKEN and typed
// --base-url, --by, --column. A message names what to change as its reader gave it. A process is
// one or the other: the command line says so once, before it parses anything (cli/commands.ts); a
// program that imports the library never does, so the library's words are the default.

export type Caller = 'cli' | 'library';

let current: Caller = 'library';

/** From now on, messages speak to `caller` (the command line calls it once, at its start). */
export function speakTo(caller: Caller): void {
  current = caller;
}

/** Who the messages speak to. */
export function caller(): Caller {
  return current;
}

/** The words of `words` for the reader at hand. */
export function said(words: Readonly<Record<Caller, string>>): string {
  return words[current];
}

/** Where the token is given, as the reader gave it. */
export const TOKEN_GIVEN = { cli: 'LEAD_API_TOKEN, or token / tokenFile in the config file', library: 'the token option' } as const;

/** The option holding the API's base URL, as the reader gave it. */
export const BASE_URL_GIVEN = { cli: '--base-url', library: 'baseUrl' } as const;

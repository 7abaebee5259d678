// The command line as the report shows it: quoted where a shell would need it, and with any
// password in a URL (`--redis redis://:pw@host`, a proxy) masked. The token is never an argument
// (LEAD_API_TOKEN or the config file), but a value equal to it is masked too, should one be.
import { maskToken } from '../api/mask-token.js';

const SAFE = /^[\w@%+=:,./-]+$/;

function quoted(arg: string): string {
  return arg !== '' && SAFE.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** `user:password@` in any URL of the argument becomes `user:***@`. */
function masked(arg: string, secrets: readonly string[]): string {
  let text = arg.replace(/(\/\/[^/:@\s]*:)[^/@\s]*@/g, '$1***@');
  for (const secret of secrets) text = maskToken(text, secret);
  return text;
}

/** `args` as one line a shell would read back, passwords and `secrets` masked. */
export function commandLineText(args: readonly string[], secrets: readonly string[] = []): string {
  return args.map((arg) => quoted(masked(arg, secrets))).join(' ');
}

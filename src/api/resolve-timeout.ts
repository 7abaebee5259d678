// mx's and whois's server-side timeout (interface 4.4/4.5). Apart from client.ts so that the
// command line can check --timeout, and show its bounds in --help, without loading the HTTP client.
import { said } from './caller-words.js';
import { InvalidInputError } from './errors.js';

/** Interface 4.4/4.5: server-side timeout in ms, default 90000, at most 110000. */
export const RESOLVE_TIMEOUT_MAX_MS = 110_000;
export const RESOLVE_TIMEOUT_DEFAULT_MS = 90_000;

export function validateResolveTimeout(timeout: unknown): number | undefined {
  if (timeout === undefined) return undefined;
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout <= 0 || timeout > RESOLVE_TIMEOUT_MAX_MS) {
    throw new InvalidInputError(
      `Invalid ${said({ cli: '--timeout', library: 'timeout' })}: must be a whole number of milliseconds from 1 to ${RESOLVE_TIMEOUT_MAX_MS}, got '${String(timeout)}'`,
    );
  }
  return timeout;
}

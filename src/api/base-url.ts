// The API base URL, checked once at start: a bad one is a configuration error, not a row error.
// Apart from transport.ts so that `store --service` and `--help` do not load got.
import { said, TOKEN_GIVEN } from './caller-words.js';
import { ConfigError } from './errors.js';

/** A URL as it may be echoed in a message: without any user-info part (a token pasted there must not be printed). */
export function withoutUserInfo(raw: unknown): string {
  return String(raw).replace(/^([^/]*\/\/)[^/?#]*@/, '$1***@');
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** This machine's own name or addresses (a URL's hostname: IPv6 in brackets). */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.test(hostname);
}

export function validateBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`Invalid base URL: must be an absolute URL ending in /v2, got '${withoutUserInfo(raw)}'`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`Invalid base URL: must use https, got '${url.protocol}'`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new ConfigError(
      `Refusing plain http to ${url.hostname}: the token would travel unencrypted; use an https:// base URL (http is allowed only for loopback hosts)`,
    );
  }
  if (url.username || url.password) {
    throw new ConfigError(`Invalid base URL: must not contain credentials; give the token in ${said(TOKEN_GIVEN)}`);
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/v2')) {
    throw new ConfigError(`Invalid base URL: must end with /v2 (the API's version path, e.g. ${url.origin}/v2), got '${url.origin}${url.pathname}'`);
  }
  if (url.search || url.hash) throw new ConfigError('Invalid base URL: must not have a query or fragment');
  return `${url.origin}${path}`;
}

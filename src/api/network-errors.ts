// What a request that got no HTTP answer at all says (docs/cli-contract.md, "Networks"): which host and
// port, the cause in words (no such host, refused, timed out, a certificate not trusted), and what
// to check. Three kinds: a NetworkError (transient: retried, and many of them make the API
// "unavailable"), a TlsError (a certificate this machine does not trust: no retry helps) and a
// ProxyError (the proxy refused or cannot be reached: no retry helps). The last two end the run.
import { BASE_URL_GIVEN, said } from './caller-words.js';
import { LeadEnrichError, NetworkError, ProxyError, TlsError } from './errors.js';
import { shownProxy, type ProxySetup } from './proxy.js';

interface SystemError {
  code?: string;
  message?: string;
  hostname?: string;
  address?: string;
  port?: number;
}

const CA_ADVICE = 'if a company proxy or CA signs the connections here, point NODE_EXTRA_CA_CERTS at its certificate (a PEM file) and run again';

/** The trust problems of a certificate, in words. A function: the base URL is named as the reader gave it. */
const CERTIFICATE = (): Record<string, string> => ({
  DEPTH_ZERO_SELF_SIGNED_CERT: 'it is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'it is signed by an authority this machine does not trust (a self-signed root in the chain)',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'it is signed by an authority this machine does not know',
  UNABLE_TO_GET_ISSUER_CERT: 'it is signed by an authority this machine does not know',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'it is signed by an authority this machine does not know',
  CERT_UNTRUSTED: 'it is not trusted',
  CERT_HAS_EXPIRED: 'it has expired (or the clock of this machine is wrong)',
  CERT_NOT_YET_VALID: 'it is not valid yet (or the clock of this machine is wrong)',
  ERR_TLS_CERT_ALTNAME_INVALID: `it was issued for another host name (check ${said(BASE_URL_GIVEN)})`,
});

/** Causes of a failed connection, in words, with what to check. */
const CONNECTION = (): Record<string, [string, string]> => ({
  ENOTFOUND: [
    'no such host',
    `check the host name in ${said({ cli: '--base-url / LEAD_API_BASE_URL', library: 'baseUrl' })}, the DNS, and HTTPS_PROXY if this network needs a proxy`,
  ],
  EAI_AGAIN: ['the host name could not be looked up now (DNS)', 'check the network and the DNS, then run again'],
  ECONNREFUSED: ['connection refused', `check the port in ${said(BASE_URL_GIVEN)}, and that the server runs`],
  ECONNRESET: ['the connection was reset', 'run again; if it keeps happening, check a firewall or proxy in between'],
  ETIMEDOUT: ['the connection timed out', 'check the network, a firewall, or HTTPS_PROXY if this network needs a proxy'],
  EHOSTUNREACH: ['no route to the host', 'check the network, or HTTPS_PROXY if this network needs a proxy'],
  ENETUNREACH: ['the network is unreachable', 'check the network connection'],
  EPIPE: ['the connection was closed while sending', 'run again'],
});

/**
 * A host name the DNS says does not exist (ENOTFOUND): an address that is not the API, which no
 * wait mends (EAI_AGAIN, a DNS that could not answer now, may pass).
 */
export function isUnknownHost(error: unknown): boolean {
  return error instanceof NetworkError && (error.cause as { code?: unknown } | undefined)?.code === 'ENOTFOUND';
}

export interface Target {
  host: string;
  port: number;
  path: string;
}

/** The error for a request to `target` that failed before any HTTP answer (`cause` is already safe to keep). */
export function networkFailure(error: SystemError, target: Target, proxy: ProxySetup['proxy'], cause: Error): LeadEnrichError {
  const code = error.code ?? 'error';
  const where = `${target.host}:${target.port}`;
  if (proxy && isProxyFailure(error, proxy.url)) return proxyFailure(error, proxy, cause);
  const certificate = CERTIFICATE()[code];
  if (certificate) return new TlsError(`The certificate of ${where} is not trusted: ${certificate} (${code}); ${CA_ADVICE}`, { cause });
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'EPROTO') {
    return new TlsError(`${where} does not speak TLS (${code}): check the scheme of ${said(BASE_URL_GIVEN)} (https or http) and its port`, { cause });
  }
  const [why, check] = CONNECTION()[code] ?? [error.message ?? code, `check the network and ${said(BASE_URL_GIVEN)}`];
  return new NetworkError(`Cannot reach ${where} (${target.path}): ${why}${why.includes(code) ? '' : ` (${code})`}; ${check}`, { cause });
}

/** A tunnel the proxy refused, or a proxy that cannot be reached at all. */
function isProxyFailure(error: SystemError, url: URL): boolean {
  if (error.code === 'ERR_PROXY_TUNNEL') return true;
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return (error.hostname === host || error.address === host) && (error.port === undefined || error.port === port);
}

function proxyFailure(error: SystemError, proxy: NonNullable<ProxySetup['proxy']>, cause: Error): LeadEnrichError {
  const named = `The proxy ${shownProxy(proxy.url)} (${proxy.from})`;
  const status = /HTTP\/1\.[01] (\d{3}[^\r\n]*)/.exec(error.message ?? '')?.[1]?.trim();
  if (status?.startsWith('407')) {
    return new ProxyError(`${named} refused the request: ${status}; check the user name and password in ${proxy.from}`, { cause });
  }
  if (status !== undefined) {
    return new ProxyError(`${named} would not open a connection to the API: ${status}; check ${proxy.from} and NO_PROXY`, { cause });
  }
  const [why] = CONNECTION()[error.code ?? ''] ?? [error.message ?? 'unreachable'];
  return new ProxyError(`${named} cannot be reached: ${why} (${error.code}); check ${proxy.from}`, { cause });
}

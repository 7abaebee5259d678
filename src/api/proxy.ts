// Corporate proxies (docs/cli-contract.md, "Networks"): HTTPS_PROXY / https_proxy, HTTP_PROXY / http_proxy
// and NO_PROXY / no_proxy as curl and npm read them, or the config file's `proxy` (which wins
// over the environment, as npm's own config does; NO_PROXY still applies). Node's own agents do
// the tunnelling (`proxyEnv`, Node 22.21 and 24.5 on): CONNECT with the URL's credentials as Basic
// auth, NO_PROXY, keep-alive through the tunnel. This file decides what they get (this machine's
// own addresses always bypass the proxy), and names the proxy for messages, never with its password.
import { isLoopbackHost } from './base-url.js';
import { ConfigError } from './errors.js';
import { processEnv } from './environment.js';

export interface ProxySetup {
  /** What Node's agents read the proxy settings from; undefined: no proxy. */
  env: Record<string, string | undefined> | undefined;
  /** The proxy that requests to the base URL go through (unless NO_PROXY names its host), and where it was set. */
  proxy: { url: URL; from: string } | undefined;
}

/** The proxy settings for requests to `baseUrl`: `configured` (the config file's), else the environment's. */
export function proxySetup(baseUrl: string, configured: string | undefined, env: NodeJS.ProcessEnv = processEnv()): ProxySetup {
  const base = new URL(baseUrl);
  const https = base.protocol === 'https:';
  if (configured !== undefined) {
    return checked(base, {
      env: { HTTPS_PROXY: configured, HTTP_PROXY: configured, ...noProxy(env) },
      proxy: { url: new URL(configured), from: 'the config file\'s "proxy"' },
    });
  }
  // Lower case first, as Node (and curl) read them.
  const names = https ? ['https_proxy', 'HTTPS_PROXY'] : ['http_proxy', 'HTTP_PROXY'];
  const from = names.find((name) => env[name] !== undefined && env[name] !== '');
  if (from === undefined) return { env: undefined, proxy: undefined };
  let url: URL;
  try {
    url = new URL(env[from]!);
  } catch {
    throw new ConfigError(`Invalid ${from}: must be a proxy URL such as http://proxy.example.com:3128, got '${shownProxyText(env[from]!)}'`);
  }
  return checked(base, { env: { ...env, ...noProxy(env) }, proxy: { url, from } });
}

/**
 * NO_PROXY as set (lower case first, as Node reads it), plus this machine: a proxy never serves
 * 127.0.0.1 (the embedded sandbox, a local test server), whatever the list says.
 */
function noProxy(env: NodeJS.ProcessEnv): { NO_PROXY: string; no_proxy: string } {
  const given = env.no_proxy ?? env.NO_PROXY ?? '';
  const list = [given, 'localhost', '127.0.0.1', '::1'].filter((entry) => entry !== '').join(',');
  return { NO_PROXY: list, no_proxy: list };
}

function checked(base: URL, setup: ProxySetup): ProxySetup {
  if (setup.proxy && !canProxy()) {
    throw new ConfigError(
      `${setup.proxy.from} names a proxy, but Node.js ${process.versions.node} cannot send requests through one: use Node.js 22.21 or 24.5 or later (26 is the active LTS)`,
    );
  }
  refuseClearTextToProxy(base, setup);
  return setup;
}

/**
 * Plain http is allowed to this machine only (base-url.ts); through a proxy the request, token
 * included, goes in clear to the proxy, so the proxy must be on this machine too, or not used.
 * Only an exact NO_PROXY entry (or `*`) counts as a bypass here: a pattern Node might read
 * otherwise must not decide where the token goes.
 */
function refuseClearTextToProxy(base: URL, setup: ProxySetup): void {
  const proxy = setup.proxy;
  if (base.protocol !== 'http:' || !proxy || isLoopbackHost(proxy.url.hostname)) return;
  const host = base.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const bypass = (setup.env?.NO_PROXY ?? '').split(/[\s,]+/).map((entry) => entry.replace(/^\[|\]$/g, '').toLowerCase());
  if (bypass.includes(host) || bypass.includes('*')) return;
  throw new ConfigError(
    `Refusing plain http to ${base.hostname} through the proxy ${shownProxy(proxy.url)} (${proxy.from}): the token would travel unencrypted to the proxy; use an https:// base URL, or name ${host} in NO_PROXY`,
  );
}

/** Node's agents tunnel through a proxy from 22.21 (22.x) and 24.5 on. */
export function canProxy(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major === 22) return minor >= 21;
  if (major === 24) return minor >= 5;
  return major > 24;
}

/** A proxy URL as it may be shown: the user name kept, the password never. */
export function shownProxy(url: URL): string {
  const copy = new URL(url.href);
  if (copy.password !== '') copy.password = '';
  return copy.href.replace(/\/$/, '');
}

/** The same for text that may not even parse as a URL. */
export function shownProxyText(text: string): string {
  try {
    return shownProxy(new URL(text));
  } catch {
    return text.replace(/:[^:@/]*@/, '@');
  }
}

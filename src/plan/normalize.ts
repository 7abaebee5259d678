// The "plan" step, part 2: turn one row's raw key cell into the key we look up, or into a short
// user-facing reason why no request is made (a key that cannot be valid is refused here, before a
// request could cost anything; the reason ends up in the sidecar's `error_message` with
// `invalid_input`).
//
// This runs once per row for files of millions of rows, so every pattern is compiled once at
// module level, the common (ASCII, already clean) case takes the first branch of each test,
// emails never go through `new URL`, and `domainToASCII` is only called for non-ASCII input.
//
// Keys:
// - email:  trimmed, lower-cased, without surrounding `<>` / a `Name <...>` display name and
//           without a leading `mailto:`; the domain is kept as written (unicode stays unicode).
// - url:    `https://host[:port]/path`: scheme and host lower-case (http is upgraded to https:
//           the same profile), path case kept, no query, no fragment, no trailing slash, no
//           default port, duplicate slashes collapsed, percent-escapes in upper-case hex.
// - domain: bare ASCII (punycode) name: no scheme, no `www.`, no path, query, port or trailing dot.

import { domainToASCII } from 'node:url';

import { LOOKUP_KINDS, type LookupKind } from '../core/kinds.js';
import { optionAsked } from '../options/option-table.js';

// In detection priority order (core/kinds.ts): the most precise person lookup first.
export { LOOKUP_KINDS, type LookupKind };

export type NormalizeResult = { ok: true; key: string } | { ok: false; reason: string };

// Frozen shared results for the common failures: no allocation per bad row.
const EMPTY: Readonly<Record<LookupKind, NormalizeResult>> = {
  email: Object.freeze({ ok: false, reason: 'empty email' }),
  url: Object.freeze({ ok: false, reason: 'empty profile URL' }),
  domain: Object.freeze({ ok: false, reason: 'empty domain' }),
};

function fail(reason: string): NormalizeResult {
  return { ok: false, reason };
}

/** Quote a value inside a reason, cut so that one bad cell cannot make a huge message. */
/** Why a URL or domain key that holds an @ is refused, naming the option as its reader gives it. */
function emailNotUrl(): string {
  return `looks like an email address; use ${optionAsked('by', 'email', "'email'")}`;
}

function quote(value: string): string {
  const flat = value.replace(WHITESPACE_RUN, ' ');
  return `'${flat.length > 60 ? `${flat.slice(0, 57)}...` : flat}'`;
}

// ---------------------------------------------------------------------------------------------
// Shared domain rules (RFC 1035 / 5890 host names, as used by email domains and --by domain).

/**
 * A lower-case ASCII host name with at least one dot: labels of 1-63 `[a-z0-9-]` not starting or
 * ending with `-`; the last label (TLD) is at least 2 letters, or an IDN TLD in punycode (`xn--`).
 * Labels cannot contain dots, so this cannot backtrack badly.
 */
const ASCII_DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9](?:[a-z0-9-]{0,57}[a-z0-9])?)$/;
const NON_ASCII = /[^\x00-\x7f]/;
const WHITESPACE = /\s/;
const WHITESPACE_RUN = /\s+/g;
const LABEL_CHARS = /^[a-z0-9-]+$/;
const BAD_LABEL_CHAR = /[^a-z0-9-]/;
const TLD_OK = /^(?:[a-z]{2,63}|xn--[a-z0-9-]+)$/;
const MAX_DOMAIN_LENGTH = 253;

/**
 * Why an ASCII host name is not valid, or undefined when it is. Only called after the fast
 * `ASCII_DOMAIN` test has failed (or to double-check the length), so it may be slow.
 */
function domainProblem(host: string): string | undefined {
  if (host.length > MAX_DOMAIN_LENGTH) return `longer than ${MAX_DOMAIN_LENGTH} characters`;
  if (ASCII_DOMAIN.test(host)) return undefined;
  if (WHITESPACE.test(host)) return 'contains a space';
  if (!host.includes('.')) return 'no dot';
  const labels = host.split('.');
  for (const label of labels) {
    if (label === '') return 'empty label';
    if (label.length > 63) return 'a label is longer than 63 characters';
    if (!LABEL_CHARS.test(label)) {
      const bad = BAD_LABEL_CHAR.exec(label)?.[0] ?? '?';
      return `invalid character '${bad}'`;
    }
    if (label.startsWith('-') || label.endsWith('-')) return "a label starts or ends with '-'";
  }
  const tld = labels[labels.length - 1] ?? '';
  if (!TLD_OK.test(tld)) return `top-level domain '${tld}' is not at least 2 letters`;
  return 'not a host name';
}

// ---------------------------------------------------------------------------------------------
// email

const MAX_EMAIL_LENGTH = 254;
const MAX_LOCAL_LENGTH = 64;
/** Never valid in an unquoted local part (RFC 5322 atext) nor useful to send: spaces, controls, specials. */
const BAD_LOCAL_CHAR = /[\s\x00-\x1f\x7f"(),:;<>[\]\\]/;

export function normalizeEmail(raw: string | undefined): NormalizeResult {
  if (raw === undefined) return EMPTY.email;
  let s = raw.trim();
  if (s === '') return EMPTY.email;
  s = s.toLowerCase();

  // `<jane@x.com>` and `Jane Doe <jane@x.com>` (mail-client exports).
  if (s.endsWith('>')) {
    const lt = s.lastIndexOf('<');
    if (lt >= 0) s = s.slice(lt + 1, -1).trim();
  }
  if (s.startsWith('mailto:')) {
    s = s.slice(7);
    const q = s.indexOf('?'); // mailto:jane@x.com?subject=...
    if (q >= 0) s = s.slice(0, q);
    s = s.trim();
  }
  // A sentence-final dot ("write to jane@x.com.") or a fully-qualified domain's root dot.
  while (s.endsWith('.')) s = s.slice(0, -1);
  if (s === '') return EMPTY.email;

  const at = s.indexOf('@');
  if (at < 0) return fail('email has no @');
  if (s.indexOf('@', at + 1) >= 0) return fail('email has more than one @');
  if (s.length > MAX_EMAIL_LENGTH) return fail(`email is longer than ${MAX_EMAIL_LENGTH} characters`);

  const local = s.slice(0, at);
  if (local === '') return fail('email has nothing before @');
  if (local.length > MAX_LOCAL_LENGTH) {
    return fail(`email part before @ is longer than ${MAX_LOCAL_LENGTH} characters`);
  }
  const bad = BAD_LOCAL_CHAR.exec(local);
  if (bad !== null) {
    return fail(WHITESPACE.test(bad[0]) ? 'email contains a space' : `email has an invalid character '${bad[0]}'`);
  }

  const domain = s.slice(at + 1);
  if (domain === '') return fail('email has nothing after @');
  if (ASCII_DOMAIN.test(domain) && domain.length <= MAX_DOMAIN_LENGTH) return { ok: true, key: s };

  // Slow path: unicode domains are kept as written in the key, but must be valid IDNA names.
  let problem: string | undefined;
  if (WHITESPACE.test(domain)) problem = 'contains a space';
  else if (NON_ASCII.test(domain)) {
    const ascii = domainToASCII(domain);
    problem = ascii === '' ? 'not a valid international domain name' : domainProblem(ascii);
  } else problem = domainProblem(domain);
  if (problem === undefined) return { ok: true, key: s };
  return fail(`email domain ${quote(domain)} is not a domain (${problem})`);
}

// ---------------------------------------------------------------------------------------------
// profile URL

/** A scheme, unless the colon starts a port (`linkedin.com:443/in/jane`). */
const SCHEME = /^([a-z][a-z0-9+.-]*):(?!\d)/i;
const HOST_END = /[/?#]/;
const DUPLICATE_SLASHES = /\/{2,}/g;
/** linkedin.com, www., m., mobile. or a two-letter country subdomain of it. */
const LINKEDIN_HOST = /^(?:(?:www|m|mobile|[a-z]{2})\.)?linkedin\.com$/;
const TRAILING_SLASHES = /\/+$/;
const PERCENT_ESCAPE = /%[0-9a-f]{2}/gi;

export function normalizeUrl(raw: string | undefined): NormalizeResult {
  if (raw === undefined) return EMPTY.url;
  let s = raw.trim();
  if (s === '') return EMPTY.url;

  const scheme = SCHEME.exec(s)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    if (s.startsWith('//')) s = `https:${s}`;
    else {
      // No scheme: accept what looks like `host.tld/path` and make it https.
      const hostEnd = s.search(HOST_END);
      const host = hostEnd < 0 ? s : s.slice(0, hostEnd);
      if (host.includes('@')) return fail(emailNotUrl());
      if (host === '' || !host.includes('.') || WHITESPACE.test(host)) return fail('not an http(s) URL');
      s = `https://${s}`;
    }
  } else if (scheme === 'mailto') {
    return fail(emailNotUrl());
  } else if (scheme !== 'http' && scheme !== 'https') {
    return fail('not an http(s) URL');
  }
  if (WHITESPACE.test(s)) return fail('profile URL contains a space');

  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return fail('not a valid URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return fail('not an http(s) URL');
  if (url.username !== '' || url.password !== '') return fail('profile URL has a user name or password');

  // WHATWG parsing already lower-cased the host, converted IDNs to punycode, resolved `.`/`..`
  // path segments and dropped the scheme's default port.
  let host = url.hostname;
  while (host.endsWith('.')) host = host.slice(0, -1);
  if (host === '') return fail('profile URL has no host');
  const problem = domainProblem(host);
  if (problem !== undefined) return fail(`profile URL host ${quote(host)} is not a domain (${problem})`);

  // One profile, many hosts: exports mix linkedin.com, www., m. and country subdomains (de., uk.)
  // for the same person, and each spelling would be paid for. LinkedIn's own canonical host is
  // www.linkedin.com. Other networks' hosts are kept as they are.
  if (LINKEDIN_HOST.test(host)) host = 'www.linkedin.com';

  let path = url.pathname;
  if (path.includes('//')) path = path.replace(DUPLICATE_SLASHES, '/');
  path = path.replace(TRAILING_SLASHES, '');
  if (path === '') return fail('profile URL has no path');
  if (path.includes('%')) path = path.replace(PERCENT_ESCAPE, (e) => e.toUpperCase());

  return { ok: true, key: `https://${host}${url.port === '' ? '' : `:${url.port}`}${path}` };
}

// ---------------------------------------------------------------------------------------------
// domain

const DOMAIN_SCHEME = /^[a-z][a-z0-9+.-]*:\/\//;
const PORT_SUFFIX = /:\d{1,5}$/;

export function normalizeDomain(raw: string): NormalizeResult {
  if (typeof raw !== 'string') return EMPTY.domain;
  let s = raw.trim();
  if (s === '') return EMPTY.domain;
  s = s.toLowerCase();

  let hadScheme = false;
  const scheme = DOMAIN_SCHEME.exec(s);
  if (scheme !== null) {
    s = s.slice(scheme[0].length);
    hadScheme = true;
  } else if (s.startsWith('//')) {
    s = s.slice(2);
    hadScheme = true;
  }
  const hostEnd = s.search(HOST_END);
  if (hostEnd >= 0) s = s.slice(0, hostEnd);

  const at = s.lastIndexOf('@');
  if (at >= 0) {
    // `jane@acme.com` in a domain column is a mistake worth naming; `http://user@host` is a URL.
    if (!hadScheme) return fail(emailNotUrl());
    s = s.slice(at + 1);
  }
  if (s.includes(':')) s = s.replace(PORT_SUFFIX, '');
  while (s.endsWith('.')) s = s.slice(0, -1);
  if (s === '') return fail(`domain ${quote(raw.trim())} is not valid (no host name)`);
  if (WHITESPACE.test(s)) return fail(`domain ${quote(s)} is not valid (contains a space)`);

  if (NON_ASCII.test(s)) {
    const ascii = domainToASCII(s);
    if (ascii === '') return fail(`domain ${quote(s)} is not a valid international domain name`);
    s = ascii;
    while (s.endsWith('.')) s = s.slice(0, -1);
  }
  // `www.acme.com` is the company's domain `acme.com`; `www.com` is left alone (and rejected).
  if (s.startsWith('www.') && s.indexOf('.', 4) > 4) s = s.slice(4);

  if (ASCII_DOMAIN.test(s) && s.length <= MAX_DOMAIN_LENGTH) return { ok: true, key: s };
  const problem = domainProblem(s) ?? 'not a host name';
  return fail(`domain ${quote(s)} is not valid (${problem})`);
}

// ---------------------------------------------------------------------------------------------

export function normalizeKey(kind: LookupKind, raw: string | undefined): NormalizeResult {
  switch (kind) {
    case 'email':
      return normalizeEmail(raw);
    case 'url':
      return normalizeUrl(raw);
    case 'domain':
      return raw === undefined ? EMPTY.domain : normalizeDomain(raw);
  }
}

/**
 * The domain that `--with mx,whois` resolves for a row, in ASCII (punycode) form:
 * - email: the part after `@` of the normalized key;
 * - domain: the key itself;
 * - url: a profile URL names no company, so the row's domain comes from a second column found by
 *   `detectDomainColumn` (pass that cell as `domainCell`); undefined without one or when that
 *   cell is not a valid domain.
 * `key` must be a key returned by `normalizeKey` for the same kind.
 */
export function domainForRow(kind: LookupKind, key: string, domainCell?: string): string | undefined {
  switch (kind) {
    case 'email': {
      const domain = key.slice(key.lastIndexOf('@') + 1);
      if (!NON_ASCII.test(domain)) return domain;
      const ascii = domainToASCII(domain);
      return ascii === '' ? undefined : ascii;
    }
    case 'domain':
      return key;
    case 'url': {
      if (domainCell === undefined) return undefined;
      const result = normalizeDomain(domainCell);
      return result.ok ? result.key : undefined;
    }
  }
}

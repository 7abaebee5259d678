/*
 * Sandbox keys: which operations take one, where it is read from, how it is normalized and when
 * it is rejected. The server normalizes whatever the client sent, so a key is charged and
 * answered once whatever its spelling (data.ts gives the answer for the normalized key).
 *
 * Normalization:
 * - email (`lookup_email`, query `email_address`): trimmed and lower-cased.
 * - profile URL (`lookup_url`, query `url`): trimmed; when it parses as an http(s) URL: scheme and
 *   host lower-case, user/password, query and fragment dropped, trailing slashes of the path
 *   dropped (`HTTPS://Network.Example/in/Jane/?x=1#a` -> `https://network.example/in/Jane`).
 *   The path keeps its case. Anything else is only trimmed (and then rejected, below).
 * - domain (`lookup_domain` query `name`; `mx` and `whois` body `domain`): trimmed, lower-cased,
 *   scheme (`https://`) removed, everything from the first `/`, `?` or `#` removed, a `:port`
 *   removed, trailing dots removed, one leading `www.` removed
 *   (`HTTPS://WWW.Acme.com:443/about` -> `acme.com`).
 *
 * Rejection (400 with `reasons`), on the normalized key:
 * - empty key;
 * - email: not exactly one `@`, empty local part, or no `.` in the part after `@`;
 * - URL: not an http: or https: URL with a host;
 * - domain: no `.`;
 * - any key containing `reject`.
 */

import type { DomainLookupData, EmailLookupData, MxResult, Operation, UrlLookupData, WhoisResult } from '../api/types.js';

/** The operations that take a key (and may cost credits). */
export interface SandboxDataByOperation {
  lookup_url: UrlLookupData;
  lookup_email: EmailLookupData;
  lookup_domain: DomainLookupData;
  mx: MxResult;
  whois: WhoisResult;
}
export type SandboxKeyOperation = keyof SandboxDataByOperation & Operation;

export const SANDBOX_KEY_OPERATIONS: readonly SandboxKeyOperation[] = ['lookup_url', 'lookup_email', 'lookup_domain', 'mx', 'whois'];

export function isSandboxKeyOperation(op: string): op is SandboxKeyOperation {
  return (SANDBOX_KEY_OPERATIONS as readonly string[]).includes(op);
}

/** Where each keyed operation takes its key (interface part 4). */
export const SANDBOX_KEY_PARAMS: Readonly<Record<SandboxKeyOperation, { name: string; location: 'query' | 'body' }>> = {
  lookup_url: { name: 'url', location: 'query' },
  lookup_email: { name: 'email_address', location: 'query' },
  lookup_domain: { name: 'name', location: 'query' },
  mx: { name: 'domain', location: 'body' },
  whois: { name: 'domain', location: 'body' },
};

/** One element of a 400 body's `error.reasons` (docs/api-behaviour-notes.md, "Error bodies"). */
export interface KeyRejectionReason {
  field: string[];
  location: string;
  messages: string[];
  types: string[];
}

/** Builds a reason in the production server's (Joi-like) form: `"field" <text>`. */
export function validationReason(field: string, location: string, text: string, type: string): KeyRejectionReason {
  return {
    field: field === '' ? [] : [field],
    location,
    messages: [field === '' ? text : `"${field}" ${text}`],
    types: [type],
  };
}

const SCHEME_RE = /^[a-z][a-z0-9+.-]*:\/\//;

function normalizeDomain(raw: string): string {
  let d = raw.trim().toLowerCase().replace(SCHEME_RE, '');
  const cut = d.search(/[/?#]/);
  if (cut >= 0) d = d.slice(0, cut);
  d = d.replace(/:\d*$/, '').replace(/\.+$/, '');
  if (d.startsWith('www.')) d = d.slice(4);
  return d;
}

function normalizeUrl(raw: string): string {
  const trimmed = raw.trim();
  let u: URL;
  try {
    u = new URL(trimmed);
  } catch {
    return trimmed;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.host === '') return trimmed;
  // URL already lower-cases the scheme and host and drops a default port.
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/** The key the sandbox charges and answers for (rules in the comment at the top of this file). */
export function normalizeSandboxKey(op: SandboxKeyOperation, raw: string): string {
  switch (op) {
    case 'lookup_email':
      return raw.trim().toLowerCase();
    case 'lookup_url':
      return normalizeUrl(raw);
    case 'lookup_domain':
    case 'mx':
    case 'whois':
      return normalizeDomain(raw);
  }
}

function isHttpUrl(key: string): boolean {
  try {
    const u = new URL(key);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** Why a normalized key is refused with a 400, or undefined when it is not. */
export function sandboxKeyRejection(op: SandboxKeyOperation, key: string): KeyRejectionReason | undefined {
  const { name, location } = SANDBOX_KEY_PARAMS[op];
  if (key === '') return validationReason(name, location, 'is not allowed to be empty', 'string.empty');
  switch (op) {
    case 'lookup_email': {
      const parts = key.split('@');
      if (parts.length !== 2 || parts[0] === '' || !(parts[1] ?? '').includes('.')) {
        return validationReason(name, location, 'must be a valid email', 'string.email');
      }
      break;
    }
    case 'lookup_url':
      if (!isHttpUrl(key)) {
        return validationReason(name, location, 'must be a valid uri with a scheme matching the http|https pattern', 'string.uriCustomScheme');
      }
      break;
    case 'lookup_domain':
    case 'mx':
    case 'whois':
      if (!key.includes('.')) {
        return validationReason(name, location, 'must contain a valid domain name', 'string.domain');
      }
      break;
  }
  if (key.includes('reject')) return validationReason(name, location, 'contains an invalid value', 'any.invalid');
  return undefined;
}

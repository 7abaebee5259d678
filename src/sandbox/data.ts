/*
 * Sandbox data rules (deterministic synthetic answers)
 * ====================================================
 *
 * Every answer is a pure function of the operation and the normalized key, so the same key gives
 * the same data from any sandbox, in any process, at any time, and tests can compute the expected
 * answer without HTTP (`normalizeSandboxKey` + `sandboxAnswer`; the server uses exactly these).
 *
 * Key normalization (the server does it itself, whatever the client sent):
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
 * Outcome, checked in this order on the normalized key:
 * 1. 400 (rejected, with `reasons`):
 *    - empty key;
 *    - email: not exactly one `@`, empty local part, or no `.` in the part after `@`;
 *    - URL: not an http: or https: URL with a host;
 *    - domain: no `.`;
 *    - any key containing `reject`.
 * 2. Not found (200, `lead: {}`, costs nothing): any key containing `notfound`; for MX also any
 *    domain containing `nomx` (answered with `mx_records: []`). For the three reverse lookups
 *    (not MX or Whois) also every key whose hash bucket falls below `notFoundRate` (default 0.1):
 *    bucket = first 4 bytes of sha1(normalized key) as an unsigned big-endian integer / 2^32.
 *    A Whois "not found" answers `whoisRecord: {}`.
 * 3. Otherwise found; the data is derived from sha1(normalized key) (field by field below).
 *
 * Found data:
 * - person lead (email and URL lookups): `id` = first 24 hex chars of the sha1, `type` "person",
 *   `name` = first + last name from small lists, `title` from a list, `contructed_title` =
 *   "<title> at <company_name>", `profile_picture` https://media.network.example/p/<id>.jpg,
 *   `addresses` = one Address from a list of locations, `total_experience_in_months` 6..485.
 *   Email lookups: `company_domain` = the email's domain, `network_url` =
 *   https://network.example/in/<first>-<last>-<6 hex>. URL lookups: `network_url` = the
 *   normalized URL, `company_domain` = <stem>.example with the stem from a list.
 *   `company_name` is always companyName(company_domain): the domain's first label, split on `-`
 *   and `_`, capitalized, plus a suffix (Inc, Ltd, ...) chosen by sha1(domain) — so a person's
 *   company and the domain lookup of that company agree.
 * - company lead (domain lookup): `id`, `type` "company", `name` = companyName(domain),
 *   `profile_picture`, `network_url` https://network.example/company/<first label>,
 *   `addresses` = ONE object { full_address, country, country_code }.
 * - `data` echoes the normalized key: email lookups `{ email_address, lead }`, domain lookups
 *   `{ name, lead }`, URL lookups `{ lead }`.
 * - MX: 1 to 3 records `mx1.<domain>` priority 10, `mx2.<domain>` priority 20, `mx3.<domain>`
 *   priority 30 (ascending priority); `verified_on` ISO 8601 with milliseconds and Z and
 *   `time_taken` (an integer, 12..611) are derived from the hash too, NOT from the clock, so
 *   answers compare byte for byte.
 * - Whois: the full whoisRecord shape of the interface (2.4) — domain {name, id, status,
 *   created_date}, registrar {...}, registrant with nested admin and tech (contact field `steet`
 *   spelled so), dnssec "unsigned", nameservers [], notice, term_of_use,
 *   last_update_whois_database ("" for half of the domains, an ISO timestamp for the others).
 * - Account operations: myplans is fixed (plan "Growth" plus one add-on whose
 *   next_charge_renewal is in the slash form "2026/12/01"); credits and limits reflect the
 *   sandbox's live balance and rate window (see sandboxCredits / sandboxLimits).
 *
 * Costs (charged only for a found answer; a miss or a 400 costs 0): person lookups 4, domain
 * lookup 1, MX 1, Whois 1 by default (server option `costs`).
 */

import { createHash } from 'node:crypto';
import type {
  Address,
  CompanyLead,
  Credits,
  DomainLookupData,
  EmailLookupData,
  Lead,
  MxRecord,
  MxResult,
  Operation,
  PlanInfo,
  ServiceLimits,
  UrlLookupData,
  WhoisContact,
  WhoisRecord,
  WhoisResult,
} from '../api/types.js';

/** The operations that take a key (and may cost credits). */
export interface SandboxDataByOperation {
  lookup_url: UrlLookupData;
  lookup_email: EmailLookupData;
  lookup_domain: DomainLookupData;
  mx: MxResult;
  whois: WhoisResult;
}
export type SandboxKeyOperation = keyof SandboxDataByOperation & Operation;

export const SANDBOX_KEY_OPERATIONS: readonly SandboxKeyOperation[] = [
  'lookup_url',
  'lookup_email',
  'lookup_domain',
  'mx',
  'whois',
];

export function isSandboxKeyOperation(op: string): op is SandboxKeyOperation {
  return (SANDBOX_KEY_OPERATIONS as readonly string[]).includes(op);
}

/** Where each keyed operation takes its key (interface part 4). */
export const SANDBOX_KEY_PARAMS: Readonly<
  Record<SandboxKeyOperation, { name: string; location: 'query' | 'body' }>
> = {
  lookup_url: { name: 'url', location: 'query' },
  lookup_email: { name: 'email_address', location: 'query' },
  lookup_domain: { name: 'name', location: 'query' },
  mx: { name: 'domain', location: 'body' },
  whois: { name: 'domain', location: 'body' },
};

/** One element of a 400 body's `error.reasons` (behaviour notes, "Error bodies"). */
export interface ValidationReason {
  field: string[];
  location: string;
  messages: string[];
  types: string[];
}

/** Builds a reason in the production server's (Joi-like) form: `"field" <text>`. */
export function validationReason(
  field: string,
  location: string,
  text: string,
  type: string,
): ValidationReason {
  return {
    field: field === '' ? [] : [field],
    location,
    messages: [field === '' ? text : `"${field}" ${text}`],
    types: [type],
  };
}

export type SandboxAnswer<O extends SandboxKeyOperation = SandboxKeyOperation> =
  | { kind: 'found'; data: SandboxDataByOperation[O] }
  | { kind: 'not_found'; data: SandboxDataByOperation[O] }
  | { kind: 'rejected'; reasons: ValidationReason[] };

export interface SandboxAnswerOptions {
  /** Fraction of ordinary reverse-lookup keys answered "not found" (hash bucket). Default 0.1. */
  notFoundRate?: number;
}

export const DEFAULT_NOT_FOUND_RATE = 0.1;

export interface SandboxCosts {
  person: number;
  company: number;
  mx: number;
  whois: number;
}

export const DEFAULT_SANDBOX_COSTS: Readonly<SandboxCosts> = { person: 4, company: 1, mx: 1, whois: 1 };

/** Credits a FOUND answer of `op` costs (a miss or a rejection costs 0). */
export function sandboxCost(op: SandboxKeyOperation, costs: SandboxCosts = DEFAULT_SANDBOX_COSTS): number {
  switch (op) {
    case 'lookup_url':
    case 'lookup_email':
      return costs.person;
    case 'lookup_domain':
      return costs.company;
    case 'mx':
      return costs.mx;
    case 'whois':
      return costs.whois;
  }
}

// ---------------------------------------------------------------------------------------------
// Normalization

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

// ---------------------------------------------------------------------------------------------
// Lists the synthetic data is drawn from

const FIRST_NAMES = [
  'Ada', 'Bruno', 'Chloe', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiro',
  'Ines', 'Jonas', 'Keiko', 'Liam', 'Maya', 'Nikhil', 'Olga', 'Pedro',
] as const;
const LAST_NAMES = [
  'Andersen', 'Baptiste', 'Costa', 'Dubois', 'Eriksen', 'Fischer', 'Garcia', 'Haddad',
  'Ivanova', 'Jensen', 'Kowalski', 'Lindqvist', 'Moreau', 'Nakamura', 'Okafor', 'Park',
] as const;
const TITLES = [
  'Software Engineer', 'Head of Sales', 'Marketing Manager', 'Chief Technology Officer',
  'Product Manager', 'Data Analyst', 'Account Executive', 'VP Operations',
  'Customer Success Lead', 'Founder', 'Recruiter', 'Finance Director',
] as const;
const LOCATIONS = [
  { city: 'Austin', state: 'Texas', country: 'United States', country_code: 'US' },
  { city: 'Toronto', state: 'Ontario', country: 'Canada', country_code: 'CA' },
  { city: 'Manchester', state: 'England', country: 'United Kingdom', country_code: 'GB' },
  { city: 'Lyon', state: 'Auvergne-Rhone-Alpes', country: 'France', country_code: 'FR' },
  { city: 'Munich', state: 'Bavaria', country: 'Germany', country_code: 'DE' },
  { city: 'Pune', state: 'Maharashtra', country: 'India', country_code: 'IN' },
  { city: 'Melbourne', state: 'Victoria', country: 'Australia', country_code: 'AU' },
  { city: 'Sao Paulo', state: 'Sao Paulo', country: 'Brazil', country_code: 'BR' },
] as const;
const COMPANY_STEMS = [
  'acme', 'globex', 'initech', 'umbrella-labs', 'hooli', 'vandelay', 'stark-industries',
  'wayne-enterprises', 'tyrell', 'cyberdyne', 'soylent', 'wonka',
] as const;
const COMPANY_SUFFIXES = ['Inc', 'Ltd', 'GmbH', 'LLC', 'Group', 'Labs'] as const;
const REGISTRARS = [
  { name: 'Example Registrar, Inc.', host: 'example-registrar' },
  { name: 'Sandbox Domains LLC', host: 'sandbox-domains' },
  { name: 'Synthetic Names Ltd', host: 'synthetic-names' },
] as const;
const STREETS = ['Main St', 'Market St', 'High Street', 'Rue de la Paix', 'Hauptstrasse', 'King St'] as const;
const EPP_STATUSES = [
  'clientTransferProhibited',
  'clientDeleteProhibited',
  'clientUpdateProhibited',
  'serverTransferProhibited',
] as const;

function pick<T>(list: readonly T[], n: number): T {
  const v = list[n % list.length];
  if (v === undefined) throw new Error('sandbox data: empty list');
  return v;
}

/** sha1 of the key and cheap readers over its 20 bytes. */
class Digest {
  readonly bytes: Buffer;
  constructor(key: string) {
    this.bytes = createHash('sha1').update(key, 'utf8').digest();
  }
  u8(i: number): number {
    return this.bytes.readUInt8(i);
  }
  u16(i: number): number {
    return this.bytes.readUInt16BE(i);
  }
  u32(i: number): number {
    return this.bytes.readUInt32BE(i);
  }
  hex(chars: number): string {
    return this.bytes.toString('hex').slice(0, chars);
  }
  /** [0, 1): the not-found bucket. */
  bucket(): number {
    return this.u32(0) / 4294967296;
  }
}

const DAY_MS = 86_400_000;
/** Base of the derived `verified_on` timestamps: fixed, so answers never depend on the clock. */
const VERIFIED_BASE = Date.UTC(2025, 0, 1);

function capitalize(word: string): string {
  return word === '' ? word : word[0]!.toUpperCase() + word.slice(1);
}

/** The company name the sandbox gives a domain (shared by person and company leads). */
export function sandboxCompanyName(domain: string): string {
  const label = domain.split('.')[0] ?? domain;
  const words = label.split(/[-_]+/).filter((w) => w !== '').map(capitalize);
  const suffix = pick(COMPANY_SUFFIXES, new Digest(domain).u8(0));
  return `${words.length > 0 ? words.join(' ') : capitalize(domain)} ${suffix}`;
}

function address(d: Digest): Address {
  const loc = pick(LOCATIONS, d.u8(7));
  return {
    full_address: `${loc.city}, ${loc.state}, ${loc.country}`,
    state: loc.state,
    city: loc.city,
    country: loc.country,
    country_code: loc.country_code,
  };
}

function personLead(d: Digest, companyDomain: string, networkUrl: string | undefined): Lead {
  const first = pick(FIRST_NAMES, d.u8(4));
  const last = pick(LAST_NAMES, d.u8(5));
  const title = pick(TITLES, d.u8(6));
  const id = d.hex(24);
  const companyName = sandboxCompanyName(companyDomain);
  return {
    id,
    type: 'person',
    name: `${first} ${last}`,
    contructed_title: `${title} at ${companyName}`,
    profile_picture: `https://media.network.example/p/${id}.jpg`,
    network_url:
      networkUrl ?? `https://network.example/in/${first.toLowerCase()}-${last.toLowerCase()}-${d.hex(6)}`,
    title,
    company_name: companyName,
    company_domain: companyDomain,
    addresses: [address(d)],
    total_experience_in_months: 6 + (d.u16(8) % 480),
  };
}

function companyLead(d: Digest, domain: string): CompanyLead {
  const id = d.hex(24);
  const loc = address(d);
  const label = domain.split('.')[0] ?? domain;
  return {
    id,
    type: 'company',
    name: sandboxCompanyName(domain),
    profile_picture: `https://media.network.example/c/${id}.png`,
    network_url: `https://network.example/company/${label}`,
    addresses: { full_address: loc.full_address, country: loc.country, country_code: loc.country_code },
  };
}

function verifiedOn(d: Digest): string {
  return new Date(VERIFIED_BASE + (d.u32(12) % (180 * DAY_MS))).toISOString();
}

function mxResult(d: Digest, domain: string, empty: boolean): MxResult {
  const records: MxRecord[] = [];
  if (!empty) {
    const count = 1 + (d.u8(11) % 3);
    for (let i = 1; i <= count; i++) records.push({ exchange: `mx${i}.${domain}`, priority: i * 10 });
  }
  return { domain, mx_records: records, verified_on: verifiedOn(d), time_taken: 12 + (d.u16(16) % 600) };
}

function contact(d: Digest, domain: string, role: string, offset: number): WhoisContact {
  const loc = pick(LOCATIONS, d.u8(7));
  return {
    id: '',
    name: `${pick(FIRST_NAMES, d.u8(offset))} ${pick(LAST_NAMES, d.u8(offset + 1))}`,
    organization: sandboxCompanyName(domain),
    steet: `${1 + (d.u8(offset + 2) % 200)} ${pick(STREETS, d.u8(offset + 3))}`,
    city: loc.city,
    state: loc.state,
    postal_code: String(10000 + (d.u16(offset) % 89999)),
    country: loc.country_code,
    phone: `+1.555${String(d.u16(offset + 1) % 10000000).padStart(7, '0')}`,
    phone_ext: '',
    fax: '',
    fax_ext: '',
    email: `${role}@${domain}`,
  };
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function whoisRecord(d: Digest, domain: string): WhoisRecord {
  const registrar = pick(REGISTRARS, d.u8(10));
  const created = Date.UTC(1995 + (d.u8(13) % 28), d.u8(14) % 12, 1 + (d.u8(15) % 28), d.u8(16) % 24);
  const expiry = Date.UTC(2026 + (d.u8(17) % 5), d.u8(14) % 12, 1 + (d.u8(15) % 28), d.u8(16) % 24);
  const statuses: Record<string, string> = {};
  const statusCount = 1 + (d.u8(18) % 3);
  for (let i = 0; i < statusCount; i++) {
    const s = pick(EPP_STATUSES, d.u8(18) + i);
    statuses[s] = `https://icann.org/epp#${s}`;
  }
  const tld = domain.slice(domain.lastIndexOf('.') + 1).toUpperCase();
  return {
    domain: {
      name: domain,
      id: `${d.hex(10).toUpperCase()}_DOMAIN_${tld}-VRSN`,
      status: statuses,
      created_date: isoSeconds(created),
    },
    registrar: {
      name: registrar.name,
      whois_server: `whois.${registrar.host}.example`,
      url: `https://www.${registrar.host}.example`,
      registration_expiry_date: isoSeconds(expiry),
      abuse_contact_email: `abuse@${registrar.host}.example`,
      abuse_contact_phone: '+1.5555550100',
    },
    registrant: {
      ...contact(d, domain, 'hostmaster', 4),
      admin: contact(d, domain, 'admin', 8),
      tech: contact(d, domain, 'tech', 12),
    },
    dnssec: 'unsigned',
    nameservers: [],
    notice:
      'The data in this record is synthetic: it was produced by the lead-enrich sandbox server and describes no real registration.',
    term_of_use:
      'For testing only. You agree not to use this data for any purpose other than testing a client of the Lead Lookup interface.',
    last_update_whois_database: d.u8(19) % 2 === 0 ? '' : verifiedOn(d),
  };
}

// ---------------------------------------------------------------------------------------------
// Answers

function rejectionOf(op: SandboxKeyOperation, key: string): ValidationReason | undefined {
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
    case 'lookup_url': {
      let ok = false;
      try {
        const u = new URL(key);
        ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
      } catch {
        ok = false;
      }
      if (!ok) {
        return validationReason(
          name,
          location,
          'must be a valid uri with a scheme matching the http|https pattern',
          'string.uriCustomScheme',
        );
      }
      break;
    }
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

/**
 * The sandbox's answer for a normalized key (rules at the top of this file). Pure: no clock, no
 * state. `data` is what the server sends as the envelope's `data`.
 */
export function sandboxAnswer<O extends SandboxKeyOperation>(
  op: O,
  normalizedKey: string,
  options: SandboxAnswerOptions = {},
): SandboxAnswer<O> {
  const notFoundRate = options.notFoundRate ?? DEFAULT_NOT_FOUND_RATE;
  const key = normalizedKey;
  const rejection = rejectionOf(op, key);
  if (rejection !== undefined) return { kind: 'rejected', reasons: [rejection] };

  const marked = key.includes('notfound');
  const d = new Digest(key);
  // The casts below are safe: each branch builds the data type of its own `op`.
  type A = SandboxAnswer<O>;
  switch (op as SandboxKeyOperation) {
    case 'lookup_email': {
      if (marked || d.bucket() < notFoundRate) {
        return { kind: 'not_found', data: { email_address: key, lead: {} } } as A;
      }
      const domain = key.slice(key.indexOf('@') + 1);
      return { kind: 'found', data: { email_address: key, lead: personLead(d, domain, undefined) } } as A;
    }
    case 'lookup_url': {
      if (marked || d.bucket() < notFoundRate) return { kind: 'not_found', data: { lead: {} } } as A;
      const companyDomain = `${pick(COMPANY_STEMS, d.u8(10))}.example`;
      return { kind: 'found', data: { lead: personLead(d, companyDomain, key) } } as A;
    }
    case 'lookup_domain': {
      if (marked || d.bucket() < notFoundRate) return { kind: 'not_found', data: { name: key, lead: {} } } as A;
      return { kind: 'found', data: { name: key, lead: companyLead(d, key) } } as A;
    }
    case 'mx': {
      const empty = marked || key.includes('nomx');
      return { kind: empty ? 'not_found' : 'found', data: mxResult(d, key, empty) } as A;
    }
    case 'whois': {
      const data: WhoisResult = {
        domain: key,
        whoisRecord: marked ? {} : whoisRecord(d, key),
        verified_on: verifiedOn(d),
        time_taken: 40 + (d.u16(16) % 1500),
      };
      return { kind: marked ? 'not_found' : 'found', data } as A;
    }
  }
  throw new Error(`sandboxAnswer: unknown operation ${String(op)}`);
}

// ---------------------------------------------------------------------------------------------
// Account operations

/** GET /account/myplans (2.5). One add-on renews in the slash form the interface's sample shows. */
export function sandboxPlans(): PlanInfo {
  return {
    current_plan: {
      name: 'Growth',
      status: 'active',
      type: 'subscription',
      charge: '$49.00 / month',
      next_credit_allocation: '2026-01-01T00:00:00.000Z',
      next_charge_renewal: '2026-01-01T00:00:00.000Z',
    },
    addons: [
      {
        name: 'Rate Limit Booster',
        status: 'active',
        type: 'addon',
        charge: '$10.00 / month',
        next_charge_renewal: '2026/12/01',
      },
    ],
  };
}

/**
 * GET /account/credits (2.6). The breakdown always sums to the balance: bonus = min(balance, 100),
 * subscription = floor(3/4 of the rest), pay-as-you-go = what remains.
 */
export function sandboxCredits(balance: number, threshold: number): Credits {
  const bonus = Math.min(balance, 100);
  const rest = balance - bonus;
  const subscription = Math.floor((rest * 3) / 4);
  return {
    total_remaining_credits: balance,
    plan_remaining_credits: { 'pay-as-you-go': rest - subscription, subscription, bonus },
    low_credit_balance_min_threshold: threshold,
  };
}

/** GET /account/limits (2.7): "<n> RPM" strings and the end of the current window. */
export function sandboxLimits(rpm: number, remaining: number, resetAt: Date): ServiceLimits {
  return {
    email_verify: {
      api_rate_limit: {
        total: `${rpm} RPM`,
        remaining: `${remaining} RPM`,
        next_limit_reset: resetAt.toISOString(),
      },
      bulk_verify_concurrency_limit: { total: '5 parallel bulk jobs', remaining: '5 parallel bulk jobs' },
    },
  };
}

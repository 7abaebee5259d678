/*
 * Sandbox leads: the synthetic data of a FOUND answer, derived from sha1(normalized key) alone,
 * so the same key gives the same data from any sandbox, in any process, at any time.
 *
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
 * - MX: 1 to 3 records `mx1.<domain>` priority 10, `mx2.<domain>` priority 20, `mx3.<domain>`
 *   priority 30 (ascending priority); `verified_on` ISO 8601 with milliseconds and Z and
 *   `time_taken` (an integer, 12..611) are derived from the hash too, NOT from the clock, so
 *   answers compare byte for byte.
 * - Whois: the full whoisRecord shape of the interface (2.4) — domain {name, id, status,
 *   created_date}, registrar {...}, registrant with nested admin and tech (contact field `steet`
 *   spelled so), dnssec "unsigned", nameservers [], notice, term_of_use,
 *   last_update_whois_database ("" for half of the domains, an ISO timestamp for the others).
 */

import { createHash } from 'node:crypto';
import type { Address, CompanyLead, Lead, MxRecord, MxResult, WhoisContact, WhoisRecord, WhoisResult } from '../api/types.js';

// ---------------------------------------------------------------------------------------------
// Lists the synthetic data is drawn from

const FIRST_NAMES = [
  'Ada',
  'Bruno',
  'Chloe',
  'Dmitri',
  'Elena',
  'Farid',
  'Grace',
  'Hiro',
  'Ines',
  'Jonas',
  'Keiko',
  'Liam',
  'Maya',
  'Nikhil',
  'Olga',
  'Pedro',
] as const;
const LAST_NAMES = [
  'Andersen',
  'Baptiste',
  'Costa',
  'Dubois',
  'Eriksen',
  'Fischer',
  'Garcia',
  'Haddad',
  'Ivanova',
  'Jensen',
  'Kowalski',
  'Lindqvist',
  'Moreau',
  'Nakamura',
  'Okafor',
  'Park',
] as const;
const TITLES = [
  'Software Engineer',
  'Head of Sales',
  'Marketing Manager',
  'Chief Technology Officer',
  'Product Manager',
  'Data Analyst',
  'Account Executive',
  'VP Operations',
  'Customer Success Lead',
  'Founder',
  'Recruiter',
  'Finance Director',
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
  'acme',
  'globex',
  'initech',
  'umbrella-labs',
  'hooli',
  'vandelay',
  'stark-industries',
  'wayne-enterprises',
  'tyrell',
  'cyberdyne',
  'soylent',
  'wonka',
] as const;
const COMPANY_SUFFIXES = ['Inc', 'Ltd', 'GmbH', 'LLC', 'Group', 'Labs'] as const;
const REGISTRARS = [
  { name: 'Example Registrar, Inc.', host: 'example-registrar' },
  { name: 'Sandbox Domains LLC', host: 'sandbox-domains' },
  { name: 'Synthetic Names Ltd', host: 'synthetic-names' },
] as const;
const STREETS = ['Main St', 'Market St', 'High Street', 'Rue de la Paix', 'Hauptstrasse', 'King St'] as const;
const EPP_STATUSES = ['clientTransferProhibited', 'clientDeleteProhibited', 'clientUpdateProhibited', 'serverTransferProhibited'] as const;

function pick<T>(list: readonly T[], n: number): T {
  const v = list[n % list.length];
  if (v === undefined) throw new Error('sandbox data: empty list');
  return v;
}

/** sha1 of the key and cheap readers over its 20 bytes. */
export class Digest {
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
  const words = label
    .split(/[-_]+/)
    .filter((w) => w !== '')
    .map(capitalize);
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
    network_url: networkUrl ?? `https://network.example/in/${first.toLowerCase()}-${last.toLowerCase()}-${d.hex(6)}`,
    title,
    company_name: companyName,
    company_domain: companyDomain,
    addresses: [address(d)],
    total_experience_in_months: 6 + (d.u16(8) % 480),
  };
}

export function companyLead(d: Digest, domain: string): CompanyLead {
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

export function mxResult(d: Digest, domain: string, empty: boolean): MxResult {
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
    notice: 'The data in this record is synthetic: it was produced by the lead-enrich sandbox server and describes no real registration.',
    term_of_use: 'For testing only. You agree not to use this data for any purpose other than testing a client of the Lead Lookup interface.',
    last_update_whois_database: d.u8(19) % 2 === 0 ? '' : verifiedOn(d),
  };
}

/**
 * The person after a move (drift.ts): another title, at another company (one of the list's
 * `.example` domains), both chosen by `d`; the rest of the lead stays.
 */
export function movedPerson(lead: Lead, d: Digest): Lead {
  const title = pick(TITLES, TITLES.indexOf(lead.title as (typeof TITLES)[number]) + 1 + (d.u8(4) % (TITLES.length - 1)));
  const stems = COMPANY_STEMS.filter((stem) => `${stem}.example` !== lead.company_domain);
  const domain = `${pick(stems, d.u8(5))}.example`;
  const companyName = sandboxCompanyName(domain);
  return { ...lead, title, contructed_title: `${title} at ${companyName}`, company_name: companyName, company_domain: domain };
}

/** An email lookup's person: works at the email's domain. */
export function emailPersonLead(d: Digest, email: string): Lead {
  return personLead(d, email.slice(email.indexOf('@') + 1), undefined);
}

/** A URL lookup's person: the profile is the URL itself, the company one from a list. */
export function urlPersonLead(d: Digest, url: string): Lead {
  return personLead(d, `${pick(COMPANY_STEMS, d.u8(10))}.example`, url);
}

/** Whois data; `empty` (a miss) answers `whoisRecord: {}`. */
export function whoisResult(d: Digest, domain: string, empty: boolean): WhoisResult {
  return {
    domain,
    whoisRecord: empty ? {} : whoisRecord(d, domain),
    verified_on: verifiedOn(d),
    time_taken: 40 + (d.u16(16) % 1500),
  };
}

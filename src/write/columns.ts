// The columns `enrich` adds after the input header and `lead_status`, and how each is taken from
// the API's answers (README, "Added columns"). Nested data is flattened: the first address,
// MX exchanges joined in priority order, Whois contacts by their main fields.
import type { CompanyLead, Lead, MxResult, WhoisResult } from '../api/types.js';
import type { LookupKind } from '../plan/plan.js';

export interface RowData {
  lead?: Lead | CompanyLead | undefined;
  mx?: MxResult | undefined;
  whois?: WhoisResult | undefined;
}

type Column = readonly [name: string, value: (row: RowData) => unknown];

const text = (value: unknown): string => (value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));

const person = (row: RowData) => (row.lead ?? {}) as Lead;
const company = (row: RowData) => (row.lead ?? {}) as CompanyLead;
const firstAddress = (row: RowData) => {
  const addresses = person(row).addresses;
  return Array.isArray(addresses) ? (addresses[0] ?? {}) : {};
};

const PERSON_COLUMNS: readonly Column[] = [
  ['lead_name', (r) => person(r).name],
  ['lead_title', (r) => person(r).title],
  ['lead_constructed_title', (r) => person(r).contructed_title],
  ['lead_company_name', (r) => person(r).company_name],
  ['lead_company_domain', (r) => person(r).company_domain],
  ['lead_network_url', (r) => person(r).network_url],
  ['lead_location', (r) => firstAddress(r).full_address],
  ['lead_city', (r) => firstAddress(r).city],
  ['lead_state', (r) => firstAddress(r).state],
  ['lead_country', (r) => firstAddress(r).country],
  ['lead_country_code', (r) => firstAddress(r).country_code],
  ['lead_experience_months', (r) => person(r).total_experience_in_months],
  ['lead_profile_picture', (r) => person(r).profile_picture],
  ['lead_type', (r) => person(r).type],
  ['lead_id', (r) => person(r).id],
];

const COMPANY_COLUMNS: readonly Column[] = [
  ['lead_name', (r) => company(r).name],
  ['lead_network_url', (r) => company(r).network_url],
  ['lead_address', (r) => company(r).addresses?.full_address],
  ['lead_country', (r) => company(r).addresses?.country],
  ['lead_country_code', (r) => company(r).addresses?.country_code],
  ['lead_profile_picture', (r) => company(r).profile_picture],
  ['lead_type', (r) => company(r).type],
  ['lead_id', (r) => company(r).id],
];

const sortedMx = (row: RowData) =>
  Array.isArray(row.mx?.mx_records) ? [...row.mx.mx_records].sort((a, b) => Number(a.priority) - Number(b.priority)) : [];

const MX_COLUMNS: readonly Column[] = [
  ['mx_primary', (r) => sortedMx(r)[0]?.exchange],
  // "10 mx1.acme.com; 20 mx2.acme.com": every record, lowest priority number first.
  ['mx_records', (r) => (r.mx ? sortedMx(r).map((m) => `${m.priority} ${m.exchange}`).join('; ') : undefined)],
];

const record = (row: RowData) => row.whois?.whoisRecord ?? {};
const WHOIS_COLUMNS: readonly Column[] = [
  ['whois_registrar', (r) => record(r).registrar?.name],
  ['whois_created', (r) => record(r).domain?.created_date],
  ['whois_expires', (r) => record(r).registrar?.registration_expiry_date],
  ['whois_registrant_name', (r) => record(r).registrant?.name],
  ['whois_registrant_organization', (r) => record(r).registrant?.organization],
  ['whois_registrant_country', (r) => record(r).registrant?.country],
  ['whois_registrant_email', (r) => record(r).registrant?.email],
  ['whois_nameservers', (r) => (Array.isArray(record(r).nameservers) ? record(r).nameservers!.map(text).join('; ') : undefined)],
  ['whois_dnssec', (r) => record(r).dnssec],
];

export interface ColumnSet {
  names: string[];
  values(row: RowData): string[];
}

export function columnsFor(kind: LookupKind, extras: { mx: boolean; whois: boolean }): ColumnSet {
  const columns = [
    ...(kind === 'domain' ? COMPANY_COLUMNS : PERSON_COLUMNS),
    ...(extras.mx ? MX_COLUMNS : []),
    ...(extras.whois ? WHOIS_COLUMNS : []),
  ];
  return {
    names: columns.map(([name]) => name),
    values: (row) => columns.map(([, value]) => text(value(row))),
  };
}

/** Spreadsheets run a cell that starts with one of these as a formula (CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/** Added cells only: input cells are never changed. */
export function escapeFormula(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

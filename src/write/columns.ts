// The columns `enrich` adds after the input header and `lead_status`, and how each is taken from
// the API's answers (docs/reference.md, "The enriched CSV"). Nested data is flattened: the first address,
// MX exchanges joined in priority order, Whois contacts by their main fields.
import { firstLead, leadMatches } from '../api/client.js';
import type { CompanyLead, Lead } from '../api/types.js';
import type { LookupKind } from '../core/kinds.js';
import type { FinishedRow, RowData } from '../core/rows.js';
import type { Operation } from '../api/types.js';
import type { AnswerCells, CellsRenderer } from '../store/answer-cells.js';
import { layoutOf, recordText, splitRecord, storedText } from './stored-cells.js';

export type { RowData } from '../core/rows.js';

type Column = readonly [name: string, value: (row: RowData) => unknown];

const text = (value: unknown): string => (value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));

// A domain that matches several companies answers an array of them: the columns hold the first.
const person = (row: RowData) => (firstLead(row.lead) ?? {}) as Lead;
const company = (row: RowData) => (firstLead(row.lead) ?? {}) as CompanyLead;
/** How many leads matched: empty when nothing was found. */
const matches = (lead: unknown): number | undefined => leadMatches(lead) || undefined;
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
  ['lead_matches', (r) => matches(r.lead)],
];

const firm = (row: RowData) => (firstLead(row.company) ?? {}) as CompanyLead;
/** --with company (docs/cli-contract.md, "Company"); `company_status` and `company_billing` come from the row. */
const COMPANY_OF_ROW_COLUMNS: readonly Column[] = [
  ['company_name', (r) => firm(r).name],
  ['company_network_url', (r) => firm(r).network_url],
  ['company_address', (r) => firm(r).addresses?.full_address],
  ['company_country', (r) => firm(r).addresses?.country],
  ['company_country_code', (r) => firm(r).addresses?.country_code],
  ['company_id', (r) => firm(r).id],
  ['company_matches', (r) => matches(r.company)],
];

const sortedMx = (row: RowData) => (Array.isArray(row.mx?.mx_records) ? [...row.mx.mx_records].sort((a, b) => Number(a.priority) - Number(b.priority)) : []);

const MX_COLUMNS: readonly Column[] = [
  ['mx_primary', (r) => sortedMx(r)[0]?.exchange],
  // "10 mx1.acme.com; 20 mx2.acme.com": every record, lowest priority number first.
  [
    'mx_records',
    (r) =>
      r.mx
        ? sortedMx(r)
            .map((m) => `${m.priority} ${m.exchange}`)
            .join('; ')
        : undefined,
  ],
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
  /** The status column's name (`lead_status`, after --prefix): always written, first. */
  status: string;
  /** The added columns after it, in order (after --prefix and --fields). */
  names: string[];
  /** The same without --prefix: the names of fields (--fill, --changes). */
  fields: string[];
  /** Their cells for a row, as text. */
  values(row: FinishedRow): string[];
  /**
   * How many added columns, from the first, are the lookup's own in their default order (0 under
   * --fields): a row's stored record (FinishedRow.cellsRecord) stands for exactly these.
   */
  ownLeading: number;
  /** The cells of the added columns after those, as text. */
  valuesAfterOwn(row: FinishedRow): string[];
}

export interface ColumnChoice {
  /** --prefix: put before every added column's name. */
  prefix?: string | undefined;
  /** --fields: keep only these added columns, in this order (names without the prefix). */
  fields?: readonly string[] | undefined;
}

type RowColumn = readonly [name: string, value: (row: FinishedRow) => unknown];

/** The columns a lookup operation's own answer fills, or undefined for one that fills none (mx, whois). */
function answerColumnsOf(op: string): readonly Column[] | undefined {
  if (op === 'lookup_email' || op === 'lookup_url') return PERSON_COLUMNS;
  return op === 'lookup_domain' ? COMPANY_COLUMNS : undefined;
}

/**
 * An answer's own columns as text, exactly as the writer would render them from the parsed answer:
 * kept beside the answer in the store, so a stored answer becomes cells without JSON.parse of the
 * whole lead (what made re-runs of known rows slow). Undefined for an operation whose answer fills no such columns.
 */
export function answerCells(op: string, data: unknown): string[] | undefined {
  const columns = answerColumnsOf(op);
  if (columns === undefined) return undefined;
  const row: RowData = { lead: (data as { lead?: Lead } | undefined)?.lead ?? undefined };
  return columns.map(([, value]) => text(value(row)));
}

const layouts = new Map<string, string | undefined>();

/** The layout of an operation's stored cells (stored-cells.ts), e.g. `2:3bfbb6ca`; undefined for mx/whois. */
export function cellsLayout(op: string): string | undefined {
  if (!layouts.has(op)) {
    const names = answerColumnsOf(op)?.map(([name]) => name);
    layouts.set(op, names === undefined ? undefined : layoutOf(names));
  }
  return layouts.get(op);
}

/** An answer's cells as the store keeps them (stored-cells.ts); null for mx/whois. */
export function storedCells(op: string, data: unknown): string | null {
  const cells = answerCells(op, data);
  return cells === undefined ? null : storedText(cellsLayout(op)!, cells);
}

/** The renderer the store is handed (store/answer-cells.ts): it keeps the cells, knowing no column. */
export const ANSWER_CELLS: CellsRenderer = {
  layout: (op: Operation) => cellsLayout(op),
  render: (op: Operation, data: unknown): AnswerCells | undefined => {
    const cells = answerCells(op, data);
    return cells === undefined ? undefined : { layout: cellsLayout(op)!, record: recordText(cells) };
  },
};

/** Which groups of columns a run adds besides its lookup's: --with mx/whois, and `lead_source` for a waterfall. */
export interface ColumnFlags {
  mx: boolean;
  whois: boolean;
  company?: boolean;
  source?: boolean;
  /** --changes: `lead_changed`, the fields that changed since the earlier answer, last (after --fields' choice). */
  changed?: boolean;
}

const ownColumnsOf = (kind: LookupKind): readonly Column[] => (kind === 'domain' ? COMPANY_COLUMNS : PERSON_COLUMNS);

/** The lookup's own columns, in the order of its stored record (FinishedRow.cellsRecord). */
export function ownColumnNames(kind: LookupKind): string[] {
  return ownColumnsOf(kind).map(([name]) => name);
}

/** Added columns that say how the run went (status, source, billing, what changed), not what an answer holds. */
export const BOOKKEEPING_COLUMNS: ReadonlySet<string> = new Set([
  'lead_status',
  'lead_source',
  'lead_billing',
  'mx_billing',
  'whois_billing',
  'company_billing',
  'company_status',
  'lead_changed',
]);

/** Every added column after `lead_status` for a lookup kind and its extras, in the default order. */
function allColumns(kind: LookupKind, extras: ColumnFlags): RowColumn[] {
  const data = (columns: readonly Column[]): RowColumn[] => columns.map(([name, value]) => [name, (row: FinishedRow) => value(row.data)] as const);
  // The lookup's own columns come from the answer's stored record when the row has one (storedCells),
  // split once per row: the writer asks each own column in turn, so remembering the last is enough.
  let lastSplit: { record: string; cells: string[] } | undefined;
  const recordCells = (record: string): string[] => {
    if (lastSplit?.record !== record) lastSplit = { record, cells: splitRecord(record) };
    return lastSplit.cells;
  };
  const own = (columns: readonly Column[]): RowColumn[] =>
    columns.map(
      ([name, value], i) => [name, (row: FinishedRow) => (row.cellsRecord !== undefined ? recordCells(row.cellsRecord)[i] : value(row.data))] as const,
    );
  return [
    ...own(ownColumnsOf(kind)),
    ...(extras.mx ? data(MX_COLUMNS) : []),
    ...(extras.whois ? data(WHOIS_COLUMNS) : []),
    ...(extras.company ? [['company_status', (row: FinishedRow) => row.companyStatus] as const, ...data(COMPANY_OF_ROW_COLUMNS)] : []),
    // The kind that answered a waterfall row, or the last one tried (docs/cli-contract.md, "Waterfall").
    ...(extras.source ? [['lead_source', (row: FinishedRow) => row.source] as const] : []),
    ['lead_billing', (row) => row.billing],
    // What each --with operation cost, apart from the row's own lookup (docs/cli-contract.md, "Added column names").
    ...(extras.mx ? [['mx_billing', (row: FinishedRow) => row.extraBilling?.mx ?? 'none'] as const] : []),
    ...(extras.whois ? [['whois_billing', (row: FinishedRow) => row.extraBilling?.whois ?? 'none'] as const] : []),
    ...(extras.company ? [['company_billing', (row: FinishedRow) => row.extraBilling?.company ?? 'none'] as const] : []),
  ];
}

/** The names `--fields` may list for this run (without the prefix), in the default order. */
export function addedColumnNames(kind: LookupKind, extras: ColumnFlags): string[] {
  return ['lead_status', ...allColumns(kind, extras).map(([name]) => name), ...(extras.changed ? ['lead_changed'] : [])];
}

/** `lead.MEMBER` (a dotted path into the lead): a --fields name for any member of the answer, listed by the interface or not. */
export function isMemberField(name: string): boolean {
  return /^lead(\.[^.\s]+)+$/.test(name);
}

/** The column name a --fields name adds (without the prefix): `lead.MEMBER` as `lead_MEMBER`. */
export function fieldColumn(name: string): string {
  return isMemberField(name) ? name.replaceAll('.', '_') : name;
}

/**
 * The column a `lead.MEMBER` field adds: `lead_MEMBER` (dots as `_`); an array's values joined by `; `,
 * objects as JSON. Only the answer's own members: `lead.constructor` is empty, never Object's.
 */
function memberColumn(field: string): RowColumn {
  const path = field.split('.').slice(1);
  const value = (row: FinishedRow): unknown => {
    let at: unknown = firstLead(row.data.lead);
    for (const step of path) at = at !== null && typeof at === 'object' && Object.hasOwn(at, step) ? (at as Record<string, unknown>)[step] : undefined;
    return Array.isArray(at) ? at.map(text).join('; ') : at;
  };
  return [fieldColumn(field), value];
}

/** `lead_changed` (--changes): the fields that changed, joined with `;`; empty for a row not looked up again. */
export const changedCell = (row: FinishedRow): string => row.changes?.map((change) => change.field).join(';') ?? '';
const CHANGED_COLUMN: RowColumn = ['lead_changed', changedCell];

export function columnsFor(kind: LookupKind, extras: ColumnFlags, choice: ColumnChoice = {}): ColumnSet {
  const all = allColumns(kind, extras);
  const prefix = choice.prefix ?? '';
  const pick = (name: string): RowColumn => (isMemberField(name) ? memberColumn(name) : all.find(([n]) => n === name)!);
  // lead_status and lead_changed are always written, wherever --fields names them.
  const chosen = [
    ...(choice.fields ? choice.fields.filter((name) => name !== 'lead_status' && name !== 'lead_changed').map(pick) : all),
    ...(extras.changed ? [CHANGED_COLUMN] : []),
  ];
  const after = chosen.slice(ownColumnsOf(kind).length);
  return {
    status: `${prefix}lead_status`,
    names: chosen.map(([name]) => `${prefix}${name}`),
    fields: chosen.map(([name]) => name),
    values: (row) => chosen.map(([, value]) => text(value(row))),
    ownLeading: choice.fields ? 0 : ownColumnsOf(kind).length,
    valuesAfterOwn: (row) => after.map(([, value]) => text(value(row))),
  };
}

// The "plan" step, part 1: from the CSV header (and `--by` / `--column`), decide which reverse
// lookup to run and which column holds its key (docs/cli-contract.md, `enrich` options).
//
// ## How the lookup column is detected (docs/reference.md: "Which column is used")
//
// Header names are compared ignoring case, accents, a leading byte-order mark, surrounding spaces
// and every character that is not a letter or a digit (so `_`, `-`, space and `.` all disappear:
// `E-mail`, `email_address`, `Email Address`, `EmailAddress`, `Work Email`, `Correo electrónico`
// and `E-Mail-Adresse` are recognised).
//
// The names, in English, German, French, Spanish, Italian, Portuguese and Dutch, are in ONE table:
// header-names.ts. In English:
//
// | kind     | exact names                                                         | else names containing   |
// | -------- | ------------------------------------------------------------------- | ----------------------- |
// | `email`  | email, e-mail, mail, email address, email id, work email, business  | `email`                 |
// |          | email, contact email, primary email                                 |                         |
// | `url`    | url, linkedin, linkedin url, linkedin profile, linkedin profile url,| `linkedin`,             |
// |          | linkedin link, profile, profile url, profile link, network url      | `profile url`           |
// | `domain` | domain, domain name, company domain, company domain name, website,  | `domain`, `website`     |
// |          | web site, website url, company website, company url, homepage, site,|                         |
// |          | url domain                                                          |                         |
// Other languages add e.g. `Courriel`, `Correo electrónico`, `Posta elettronica`, `E-mailadres`;
// `Profil LinkedIn`, `URL del perfil`; `Webseite`, `Site web`, `Sitio web`, `Sito web`, `Domínio`.
//
// A "containing" match does not count when another word of the name shows that the column holds
// something *about* the key rather than the key itself, e.g. `Email Status`, `Email Opt Out`,
// `Email Confidence`, `Company Name for Emails`, `Email Domain` (not an email: a domain),
// `Company Linkedin Url` and `LinkedIn Followers` (not a person's profile), `Twitter Profile URL`,
// `Domain Authority`, `Website Visits`. The words are each kind's `exclude` in header-names.ts.
//
// Choosing among columns:
// 1. Kinds are tried in the order email, url, domain: the most precise person lookup wins when
//    several kinds are present (an Apollo export has `Email`, `Person Linkedin Url` and
//    `Website`: it is enriched by email).
// 2. Within a kind, an exact name beats a containing one; among equals the leftmost column wins
//    (so with duplicate header names, the first occurrence).
// 3. Nothing fits: an error listing the header, asking for `--by` and/or `--column`.
//
// Options:
// - `--by KIND` alone: the best column of that kind by the rules above; if only excluded
//   containing names exist (e.g. `Company Linkedin Url` with `--by url`) the leftmost of those;
//   none at all is an error.
// - `--column NAME` alone: the header cell equal to NAME (case-sensitive first, then compared as
//   above; the first one if several); the kind is inferred from that name (exact before
//   containing, then email, url, domain; the exclusions apply first and are dropped if nothing
//   else fits). A name that says nothing about its kind is an error asking for `--by`.
// - both: that column, looked up as that kind; no inference.
// - `--column` naming no header cell is an error listing the header.
//
// Why these rules: the exact lists come from the exports people actually feed in (HubSpot,
// Salesforce, Apollo, LinkedIn Sales Navigator, spreadsheets typed by hand); the exclusions stop
// a wrong guess from burning credits on every row (an `Email Status` column would otherwise be
// "enriched" row after row with `invalid_input`).

import { ConfigError } from '../api/errors.js';
import { LOOKUP_KINDS, type LookupKind } from './normalize.js';
import { optionAsked, optionWord, readerDoor, readOption } from '../options/option-table.js';
import { exactNames, HEADER_NAMES } from './header-names.js';

export interface LookupTarget {
  kind: LookupKind;
  /** 0-based index in the header row. */
  columnIndex: number;
  /** The header cell as written (a leading byte-order mark removed). */
  columnName: string;
}

export interface DetectOptions {
  /** `--by`: which reverse lookup. Validated here, so a raw flag string may be passed. */
  by?: LookupKind;
  /** `--column`: the header name of the key column. */
  column?: string;
}

interface KindRules {
  exact: ReadonlySet<string>;
  contains: readonly string[];
  exclude: ReadonlySet<string>;
}

/** Lower case, accents off, only letters and digits: `Correo electrónico` → `correoelectronico`. */
function squash(name: string): string {
  return plainWords(stripBom(name)).replace(NOT_ALNUM, '');
}
const NOT_ALNUM = /[^\p{L}\p{N}]+/gu;
const CAMEL_BOUNDARY = /([\p{Ll}\p{N}])(\p{Lu})/gu;
const MARKS = /\p{M}+/gu;

/** Lower case without accents (é → e, ä → a, ß stays). */
function plainWords(text: string): string {
  return text.normalize('NFD').replace(MARKS, '').toLowerCase();
}

function stripBom(name: string): string {
  return name.charCodeAt(0) === 0xfeff ? name.slice(1) : name;
}

function rulesOf(kind: LookupKind): KindRules {
  const names = HEADER_NAMES[kind];
  return { exact: new Set(exactNames(kind).map(squash)), contains: names.contains.map(squash), exclude: new Set(names.exclude.map(plainWords)) };
}

const RULES: Record<LookupKind, KindRules> = { email: rulesOf('email'), url: rulesOf('url'), domain: rulesOf('domain') };

interface HeaderCell {
  index: number;
  name: string;
  squashed: string;
  words: readonly string[];
}

function analyse(header: readonly string[]): HeaderCell[] {
  return header.map((raw, index) => {
    const name = stripBom(String(raw ?? ''));
    const words = plainWords(name.replace(CAMEL_BOUNDARY, '$1 $2')).split(NOT_ALNUM).filter(Boolean);
    return { index, name, squashed: squash(name), words };
  });
}

const EXACT = 2;
const CONTAINS = 1;
const NONE = 0;

function matchLevel(kind: LookupKind, cell: HeaderCell, strict: boolean): number {
  const r = RULES[kind];
  if (r.exact.has(cell.squashed)) return EXACT;
  for (const term of r.contains) {
    if (!cell.squashed.includes(term)) continue;
    if (!strict) return CONTAINS;
    // `EmailStatus` splits into words; `emailstatus` does not, so also test what is left.
    const rest = cell.squashed.replace(term, '');
    if (r.exclude.has(rest)) return NONE;
    if (cell.words.some((w) => r.exclude.has(w))) return NONE;
    return CONTAINS;
  }
  return NONE;
}

function bestColumn(kind: LookupKind, cells: readonly HeaderCell[], strict: boolean, skip = -1): HeaderCell | undefined {
  let best: HeaderCell | undefined;
  let bestLevel = NONE;
  for (const cell of cells) {
    if (cell.index === skip) continue;
    const level = matchLevel(kind, cell, strict);
    if (level > bestLevel) {
      best = cell;
      bestLevel = level;
      if (level === EXACT) break; // leftmost exact: nothing can beat it
    }
  }
  return best;
}

function inferKind(cell: HeaderCell): LookupKind | undefined {
  for (const strict of [true, false]) {
    let kind: LookupKind | undefined;
    let level = NONE;
    for (const k of LOOKUP_KINDS) {
      const l = matchLevel(k, cell, strict);
      if (l > level) {
        kind = k;
        level = l;
      }
    }
    if (kind !== undefined) return kind;
  }
  return undefined;
}

function target(kind: LookupKind, cell: HeaderCell): LookupTarget {
  return { kind, columnIndex: cell.index, columnName: cell.name };
}

const MAX_LISTED = 12;
const MAX_NAME = 40;

/** The header as one short line for messages: `(id, first, last, ... 20 more)`. */
export function describeHeader(header: readonly string[]): string {
  if (header.length === 0) return '(no columns)';
  const names = header.slice(0, MAX_LISTED).map((raw) => {
    const name = stripBom(String(raw ?? ''))
      .replace(/\s+/g, ' ')
      .trim();
    if (name === '') return '""';
    return name.length > MAX_NAME ? `${name.slice(0, MAX_NAME - 3)}...` : name;
  });
  const more = header.length - MAX_LISTED;
  return `(${names.join(', ')}${more > 0 ? `, ... ${more} more` : ''})`;
}

/** `--by` as typed on the command line: one kind, by the option's one rule (options/option-table.ts). */
export function parseLookupKind(value: string): LookupKind {
  const kinds = readOption('by', value, readerDoor())!;
  if (kinds.length === 1) return kinds[0]!;
  throw new ConfigError(`Invalid option ${optionWord('by')}: one kind is looked up here, got '${String(value)}'`);
}

/** What `by` and `column` take, as the reader would give them. */
const BY_ASKED = () => optionAsked('by', 'email|url|domain', "'email', 'url' or 'domain'");
const COLUMN_ASKED = () => optionAsked('column', 'NAME', "the key column's name");

function findColumn(cells: readonly HeaderCell[], header: readonly string[], column: string): HeaderCell | undefined {
  const byRaw = header.indexOf(column);
  if (byRaw >= 0) return cells[byRaw];
  const wanted = stripBom(column).trim();
  const byName = cells.find((c) => c.name.trim() === wanted);
  if (byName !== undefined) return byName;
  const squashed = squash(column);
  return squashed === '' ? undefined : cells.find((c) => c.squashed === squashed);
}

/**
 * Which lookup to run and on which column, from the header row and the `--by` / `--column`
 * options (rules in the comment at the top of this file). Throws ConfigError, with one line
 * naming the header, when nothing fits or an option names something that is not there.
 */
export function detectTarget(header: readonly string[], options: DetectOptions = {}): LookupTarget {
  const by = options.by === undefined ? undefined : parseLookupKind(options.by);
  const cells = analyse(header);

  if (options.column !== undefined) {
    const column = String(options.column);
    if (column.trim() === '') throw new ConfigError(`Invalid option ${optionWord('column')}: must name a header column, got ''`);
    const cell = findColumn(cells, header, column);
    if (cell === undefined) {
      throw new ConfigError(`Invalid option ${optionWord('column')}: no column named '${column}' in the header ${describeHeader(header)}`);
    }
    const kind = by ?? inferKind(cell);
    if (kind === undefined) {
      throw new ConfigError(`Cannot tell which lookup column '${cell.name}' is for from its name: pass ${BY_ASKED()}`);
    }
    return target(kind, cell);
  }

  if (by !== undefined) {
    const cell = bestColumn(by, cells, true) ?? bestColumn(by, cells, false);
    if (cell === undefined) {
      throw new ConfigError(`No ${by} column found in the header ${describeHeader(header)}: pass ${COLUMN_ASKED()}`);
    }
    return target(by, cell);
  }

  for (const kind of LOOKUP_KINDS) {
    const cell = bestColumn(kind, cells, true);
    if (cell !== undefined) return target(kind, cell);
  }
  throw new ConfigError(
    `No lookup column found in the header ${describeHeader(header)}: pass ${BY_ASKED()} and ${COLUMN_ASKED()} (or, when the header is not the first line, ${optionAsked('skipLines', 'N')})`,
  );
}

/** Whether `name` is exactly a name of a `kind` key column (`email`, `E-Mail`, `LinkedIn URL`, ...). */
export function namesKeyColumn(name: string, kind: LookupKind): boolean {
  return matchLevel(kind, analyse([name])[0]!, true) === EXACT;
}

/**
 * For `--with mx,whois` on profile-URL rows: a second column holding the company's domain
 * (`Website`, `Company Domain`, ...), found by the domain rules above, never the key column.
 * Undefined for email and domain lookups (their key gives the domain) or when there is none.
 */
export function detectDomainColumn(header: readonly string[], lookup: LookupTarget): LookupTarget | undefined {
  if (lookup.kind !== 'url') return undefined;
  return detectDomainColumnBeside(header, lookup.columnIndex);
}

/** A column holding a company's domain, by the domain rules above, other than the key column at `keyIndex`. */
export function detectDomainColumnBeside(header: readonly string[], keyIndex: number): LookupTarget | undefined {
  const cell = bestColumn('domain', analyse(header), true, keyIndex);
  return cell === undefined ? undefined : target('domain', cell);
}

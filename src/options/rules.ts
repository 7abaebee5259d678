// The rules option values follow, one function each. A rule reads a value from any door — a string
// typed on the command line, a JSON value from the config file, a JavaScript value from the library
// — and returns it typed, or throws RuleBroken with the rule in words (core/rule.ts). Each option's
// rule is named in registry.ts; option-table.ts words a failure for the door it came through.
import type { BudgetLimit } from '../core/budget-periods.js';
import { EXTRAS, LOOKUP_KINDS, type Extra, type LookupKind } from '../core/kinds.js';
import { RuleBroken } from '../core/rule.js';
import { shownValue } from '../core/terminal-text.js';
import { shownProxyText } from '../api/proxy.js';

export type Rule<T> = (raw: unknown) => T;

/** A rule from a reader that answers undefined for a value it refuses; `rule` says what it takes. */
export function ruleOf<T>(rule: string, read: (raw: unknown) => T | undefined): Rule<T> {
  return (raw) => {
    const value = read(raw);
    if (value === undefined) throw new RuleBroken(rule, raw);
    return value;
  };
}

/** A duration such as 30d, 12h or 15m, in milliseconds (core/duration.ts). */
export { durationMs as duration } from '../core/duration.js';

/** How a value is shown in a message: strings quoted as typed (a long one cut), anything else as JavaScript would print it. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return shownValue(value);
  if (typeof value === 'object' && value !== null) {
    try {
      return JSON.stringify(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
  return String(value);
}

function wholeNumber(raw: unknown): number | undefined {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) ? raw : undefined;
  if (typeof raw === 'string' && /^\s*\d+\s*$/.test(raw)) {
    const n = Number(raw);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

/** Any finite number, or its text (the sandbox's flags: its options say which numbers each takes). */
export const finiteNumber: Rule<number> = ruleOf('must be a number', (raw) => {
  const text = String(raw).trim();
  return text === '' || !Number.isFinite(Number(text)) ? undefined : Number(text);
});

/** A whole number ≥ 1 (rates, concurrency, timeouts). */
export const positiveInteger: Rule<number> = (raw) => {
  const n = wholeNumber(raw);
  if (n === undefined || n < 1) throw new RuleBroken('must be a positive integer', raw);
  return n;
};

/**
 * Milliseconds one Node timer can wait: 1 to 2^31-1 (about 24.8 days). A longer request timeout
 * would make Node warn and time the request out at once.
 */
export const timerMs: Rule<number> = (raw) => {
  const n = wholeNumber(raw);
  if (n === undefined || n < 1 || n > 2 ** 31 - 1)
    throw new RuleBroken('must be a positive integer, at most 2147483647 (about 24.8 days in milliseconds)', raw);
  return n;
};

/** A JavaScript integer from `min` to `max` (the sandbox's counts, ports and limits). */
export function integerIn(min: number, max = Number.MAX_SAFE_INTEGER): Rule<number> {
  const rule =
    max !== Number.MAX_SAFE_INTEGER
      ? `must be an integer between ${min} and ${max}`
      : min === 0
        ? 'must be a non-negative integer'
        : `must be an integer >= ${min}`;
  return (raw) => {
    if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < min || raw > max) throw new RuleBroken(rule, raw);
    return raw;
  };
}

/**
 * Milliseconds a timer may be set to, 0 included, fractions too (a store's commit interval):
 * setTimeout clamps anything above 2^31-1 to 1 ms.
 */
export const delayMs: Rule<number> = (raw) => {
  if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < 0 || raw > 2 ** 31 - 1)
    throw new RuleBroken(`must be a number of milliseconds from 0 to ${2 ** 31 - 1}`, raw);
  return raw;
};

/** A whole number ≥ 0 (reserves, retry counts). */
export const nonNegativeInteger: Rule<number> = (raw) => {
  const n = wholeNumber(raw);
  if (n === undefined || n < 0) throw new RuleBroken('must be a whole number, 0 or more', raw);
  return n;
};

export function oneOf<T extends string>(choices: readonly T[]): Rule<T> {
  const rule = `must be ${choices.length === 2 ? choices.join(' or ') : `one of ${choices.join(', ')}`}`;
  return (raw) => {
    if (typeof raw === 'string' && (choices as readonly string[]).includes(raw)) return raw as T;
    throw new RuleBroken(rule, raw);
  };
}

/** A proxy's URL: http:// or https://, a host, a port if not the scheme's; shown without its password when refused. */
export const proxyUrl: Rule<string> = (raw) => {
  const rule = 'must be a proxy URL such as http://proxy.example.com:3128 (user:password@ before the host when it asks for them)';
  if (typeof raw !== 'string') throw new RuleBroken(rule, raw);
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') throw new RuleBroken(rule, shownProxyText(raw));
  return raw;
};

export const nonEmptyString: Rule<string> = (raw) => {
  if (typeof raw === 'string' && raw.length > 0) return raw;
  throw new RuleBroken('must be a non-empty string', raw);
};

/** A worksheet: its name, or its 1-based position (a number in the config file or the library). */
export const sheet: Rule<string> = (raw) => {
  if (typeof raw === 'string' && raw.trim().length > 0) return raw;
  if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 1) return String(raw);
  throw new RuleBroken("must be a worksheet's name or its position (1 for the first)", raw);
};

export const yesOrNo: Rule<boolean> = (raw) => {
  if (typeof raw === 'boolean') return raw;
  throw new RuleBroken('must be true or false', raw);
};

/** A list given as an array or as one comma-separated string (also a repeated flag): its items, trimmed. */
function listItems(raw: unknown): string[] {
  return (Array.isArray(raw) ? raw : [raw])
    .flatMap((item) => String(item).split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `with: ['mx', 'company']`, or `mx,company`. */
export const extras: Rule<Extra[]> = (raw) => {
  const items = listItems(raw).map((s) => s.toLowerCase());
  for (const item of items)
    if (!(EXTRAS as readonly string[]).includes(item)) throw new RuleBroken('must be mx, whois or company, or a list such as mx,company', item);
  return [...new Set(items)] as Extra[];
};

/** `by: 'email,url'` (a waterfall), a list, or one kind: the kinds in order, each once. */
export const kinds: Rule<LookupKind[]> = (raw) => {
  const rule = 'must be email, url or domain, or a list of them in the order to try, such as email,url';
  const items = listItems(raw).map((s) => s.toLowerCase());
  if (items.length === 0) throw new RuleBroken(rule, raw);
  for (const item of items) if (!(LOOKUP_KINDS as readonly string[]).includes(item)) throw new RuleBroken(rule, item);
  const twice = items.find((kind, i) => items.indexOf(kind) !== i);
  if (twice) throw new RuleBroken(`${twice} is named twice in '${items.join(',')}'; name each kind once`, raw, true);
  return items as LookupKind[];
};

/** The key column: one name, or one per kind of a waterfall. */
export const columns: Rule<string[]> = (raw) => {
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length === 0 || list.some((name) => typeof name !== 'string' || name === ''))
    throw new RuleBroken('must name a header column, or one per kind of by', raw);
  return list as string[];
};

/** `shard: '2/4'` (or `{ index, count }`): this worker takes shard K (1-based) of N. */
export const shard: Rule<{ index: number; count: number }> = (raw) => {
  let index: number;
  let count: number;
  if (typeof raw === 'object' && raw !== null && 'index' in raw && 'count' in raw) {
    ({ index, count } = raw as { index: number; count: number });
  } else {
    const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(String(raw));
    index = Number(match?.[1]);
    count = Number(match?.[2]);
  }
  if (!Number.isInteger(index) || !Number.isInteger(count) || count < 1 || index < 1 || index > count) {
    throw new RuleBroken('must be K/N with 1 <= K <= N, such as 2/4', raw);
  }
  return { index, count };
};

/** A limit on errors, `10` or `'5%'`: a count of rows, or a share of the rows looked up. */
export const errorLimit: Rule<{ count: number } | { percent: number }> = (raw) => {
  const rule = 'must be a whole number of rows such as 10, or a percentage such as 5%';
  // The library may give the limit in the shape it is read into.
  if (typeof raw === 'object' && raw !== null) {
    const { count, percent } = raw as { count?: unknown; percent?: unknown };
    if (Number.isSafeInteger(count) && (count as number) >= 0) return { count: count as number };
    if (typeof percent === 'number' && percent >= 0 && percent <= 100) return { percent };
    throw new RuleBroken(rule, raw);
  }
  if (typeof raw === 'number') {
    if (!Number.isSafeInteger(raw) || raw < 0) throw new RuleBroken(rule, raw);
    return { count: raw };
  }
  const match = typeof raw === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(raw) : null;
  if (!match) throw new RuleBroken(rule, raw);
  const value = Number(match[1]);
  if (match[2] === '%') {
    if (value > 100) throw new RuleBroken('a percentage must be from 0 to 100', raw);
    return { percent: value };
  }
  if (!Number.isSafeInteger(value)) throw new RuleBroken(rule, raw);
  return { count: value };
};

/** One character, or `tab` (docs/cli-contract.md: `-d, --delimiter CHAR`). */
export const delimiter: Rule<string> = (raw) => {
  if (typeof raw === 'string' && raw.toLowerCase() === 'tab') return '\t';
  if (typeof raw === 'string' && [...raw].length === 1 && !/[\r\n"]/.test(raw)) return raw;
  throw new RuleBroken('must be one character such as ; or |, or tab', raw);
};

/** A WHATWG label; which labels exist is checked where the input is read (read/encoding.ts). */
export const encoding: Rule<string> = (raw) => {
  if (typeof raw === 'string' && raw.trim() !== '') return raw;
  throw new RuleBroken('must be an encoding label such as utf-8, utf-16le or windows-1252', raw);
};

export const prefix: Rule<string> = (raw) => {
  if (typeof raw === 'string' && !/[\r\n]/.test(raw)) return raw;
  throw new RuleBroken('must be text on one line, such as new_', raw);
};

/** Added column names: an array, or a comma-separated list; each once, in order. */
export const fields: Rule<string[]> = (raw) => {
  const list = listItems(raw);
  if (list.length === 0) throw new RuleBroken('must list added column names, such as lead_name,lead_title', raw);
  return [...new Set(list)];
};

/** One `--fill` pair: the input column to fill, and the added column (field) whose value fills it. */
export interface FillPair {
  column: string;
  field: string;
}

/**
 * `--fill "Title=lead_title,Company=lead_company_name"` (a list of such pairs, or the library's
 * `{ Title: 'lead_title' }`). A pair splits at its last `=`: a field name never holds one, a column
 * name may. Whether the column and the field exist is the input's and the run's to say (write/cell-fill.ts).
 */
export const fill: Rule<FillPair[]> = (raw) => {
  const rule = 'must be COLUMN=FIELD pairs such as Title=lead_title,Company=lead_company_name';
  const pairs: FillPair[] = [];
  // The library's `[{ column, field }]`: the shape the pairs are read into.
  if (
    Array.isArray(raw) &&
    raw.length > 0 &&
    raw.every((p) => typeof p === 'object' && p !== null && typeof p.column === 'string' && typeof p.field === 'string')
  ) {
    return (raw as FillPair[]).map(({ column, field }) => ({ column, field }));
  }
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
    for (const [column, field] of Object.entries(raw as Record<string, unknown>)) {
      if (column === '' || typeof field !== 'string' || field.trim() === '') throw new RuleBroken(rule, raw);
      pairs.push({ column, field: field.trim() });
    }
  } else {
    for (const item of listItems(raw)) {
      const at = item.lastIndexOf('=');
      const column = item.slice(0, at).trim();
      const field = item.slice(at + 1).trim();
      if (at < 0 || column === '' || field === '') throw new RuleBroken(rule, item);
      pairs.push({ column, field });
    }
  }
  if (pairs.length === 0) throw new RuleBroken(rule, raw);
  return pairs;
};

/** Input column names (`--only-missing Title,Company`): a list, or a comma-separated string; each once. */
export const columnNames: Rule<string[]> = (raw) => {
  const list = listItems(raw);
  if (list.length === 0) throw new RuleBroken('must list input column names, such as Title,Company', raw);
  return [...new Set(list)];
};

/**
 * --changes: a file, its format by its name (`.jsonl`, `.xlsx`, else CSV; `.gz` gzipped, but not an
 * .xlsx, a zip already), or `-` for standard output.
 */
export const changesFile: Rule<string> = (raw) => {
  const name = typeof raw === 'string' ? raw.trim() : '';
  if (name === '') throw new RuleBroken("must be a file name, or '-' for standard output", raw);
  if (/\.xlsx\.gz$/i.test(name)) throw new RuleBroken('an .xlsx is compressed already', raw, false, ': drop the .gz');
  return name;
};

export const summaryFile: Rule<string> = (raw) => {
  if (typeof raw === 'string' && raw.trim() !== '' && raw.trim() !== '-') return raw.trim();
  throw new RuleBroken('must be a file name (the job summary is Markdown appended to a file, never stdout)', raw);
};

/** `--report r.html` or `r.json`: the format is the file's extension. */
export const reportFile: Rule<string> = (raw) => {
  if (typeof raw === 'string' && /\.(html?|json)$/i.test(raw.trim())) return raw.trim();
  throw new RuleBroken("must be a file name ending in .html or .json (the report's format)", raw);
};

/**
 * `--budget`: `N` (this run), `N/day` or `N/month` (a UTC calendar day or month, across every run on
 * the store or the Redis), N a whole number of credits; a number, or a list of them (the flag
 * repeated, a config file's or the library's array).
 */
export const budgets: Rule<BudgetLimit[]> = (raw) => {
  const rule = 'must be N (credits for this run), N/day or N/month (a UTC day or month), N a whole number, such as 2000/day; repeat it for several';
  const items = Array.isArray(raw) ? raw : [raw];
  if (items.length === 0) throw new RuleBroken(rule, raw);
  return items.map((item) => {
    if (typeof item === 'number') {
      if (!Number.isSafeInteger(item) || item < 0) throw new RuleBroken(rule, item);
      return { credits: item, per: 'run' as const };
    }
    const match = typeof item === 'string' ? /^\s*(\d+)\s*(?:\/\s*(day|month)\s*)?$/i.exec(item) : null;
    const credits = match ? Number(match[1]) : NaN;
    if (!match || !Number.isSafeInteger(credits)) throw new RuleBroken(rule, item);
    return { credits, per: (match[2]?.toLowerCase() ?? 'run') as BudgetLimit['per'] };
  });
};

// Validation rules for option values, shared by the library (`enrich({ rpm: 1.5 })`) and the
// command line (`--rpm 1.5`): one message style, naming the option, the rule and what was got
// (design.md, as csv-parse does): "Invalid option rpm: must be a positive integer, got 1.5".
// Values typed on a command line arrive as strings; the library's as numbers: both are read here.
import { ConfigError } from '../api/errors.js';

/** How a value is shown in a message: strings quoted as typed, anything else as JavaScript would print it. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'object' && value !== null) {
    try {
      return JSON.stringify(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
  return String(value);
}

export function invalid(name: string, rule: string, got: unknown): ConfigError {
  return new ConfigError(`Invalid option ${name}: ${rule}, got ${shown(got)}`);
}

function wholeNumber(raw: unknown): number | undefined {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) ? raw : undefined;
  if (typeof raw === 'string' && /^\s*\d+\s*$/.test(raw)) {
    const n = Number(raw);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

/** A whole number ≥ 1 (rates, concurrency, timeouts). */
export function positiveInteger(name: string, raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  const n = wholeNumber(raw);
  if (n === undefined || n < 1) throw invalid(name, 'must be a positive integer', raw);
  return n;
}

/** A whole number ≥ 0 (reserves, retry counts). */
export function nonNegativeInteger(name: string, raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  const n = wholeNumber(raw);
  if (n === undefined || n < 0) throw invalid(name, 'must be a whole number, 0 or more', raw);
  return n;
}

export function oneOf<T extends string>(name: string, raw: unknown, choices: readonly T[]): T | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && (choices as readonly string[]).includes(raw)) return raw as T;
  throw invalid(name, `must be ${choices.length === 2 ? choices.join(' or ') : `one of ${choices.join(', ')}`}`, raw);
}

/** `with: ['mx', 'whois', 'company']`, or the command line's `--with mx,company` (also repeatable). */
export function extrasList(name: string, raw: unknown): Array<'mx' | 'whois' | 'company'> | undefined {
  if (raw === undefined) return undefined;
  const items = (Array.isArray(raw) ? raw : [raw]).flatMap((item) => String(item).split(',')).map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const item of items) {
    if (item !== 'mx' && item !== 'whois' && item !== 'company') throw invalid(name, 'must be mx, whois or company, or a list such as mx,company', item);
  }
  return [...new Set(items)] as Array<'mx' | 'whois' | 'company'>;
}

/** `--shard K/N` (or `{ index, count }`): this worker takes shard K (1-based) of N. */
export function shardOption(name: string, raw: unknown): { index: number; count: number } | undefined {
  if (raw === undefined) return undefined;
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
    throw invalid(name, 'must be K/N with 1 <= K <= N, such as 2/4', raw);
  }
  return { index, count };
}

/** `--max-errors 10` or `--max-errors 5%`: a count of rows, or a share of the rows looked up. */
export function maxErrorsOption(name: string, raw: unknown): { count: number } | { percent: number } | undefined {
  if (raw === undefined) return undefined;
  const rule = 'must be a whole number of rows such as 10, or a percentage such as 5%';
  if (typeof raw === 'number') {
    if (!Number.isSafeInteger(raw) || raw < 0) throw invalid(name, rule, raw);
    return { count: raw };
  }
  const match = typeof raw === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(raw) : null;
  if (!match) throw invalid(name, rule, raw);
  const value = Number(match[1]);
  if (match[2] === '%') {
    if (value > 100) throw invalid(name, 'a percentage must be from 0 to 100', raw);
    return { percent: value };
  }
  if (!Number.isSafeInteger(value)) throw invalid(name, rule, raw);
  return { count: value };
}

/** One character, or `tab` (cli-contract: `-d, --delimiter CHAR`). */
export function delimiterOption(name: string, raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw === 'string' && raw.toLowerCase() === 'tab') return '\t';
  if (typeof raw === 'string' && [...raw].length === 1 && !/[\r\n"]/.test(raw)) return raw;
  throw invalid(name, 'must be one character such as ; or |, or tab', raw);
}

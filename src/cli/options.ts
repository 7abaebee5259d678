// Parsing of option values the way users type them, with messages that name the option, the
// rule and what was got (design.md, "Validation messages").
import { ConfigError } from '../api/errors.js';

export function positiveInteger(option: string, raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  const text = String(raw).trim();
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new ConfigError(`Invalid option ${option}: must be a positive integer, got '${String(raw)}'`);
  }
  return Number(text);
}

export function nonNegativeInteger(option: string, raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  const text = String(raw).trim();
  if (!/^\d+$/.test(text)) throw new ConfigError(`Invalid option ${option}: must be a whole number, 0 or more, got '${String(raw)}'`);
  return Number(text);
}

/** `--with mx,whois` (also repeatable: `--with mx --with whois`). */
export function extrasList(raw: unknown): Array<'mx' | 'whois'> | undefined {
  if (raw === undefined) return undefined;
  const items = (Array.isArray(raw) ? raw : [raw]).flatMap((item) => String(item).split(',')).map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const item of items) {
    if (item !== 'mx' && item !== 'whois') throw new ConfigError(`Invalid option --with: must be mx, whois or mx,whois, got '${item}'`);
  }
  return [...new Set(items)] as Array<'mx' | 'whois'>;
}

/** `--shard K/N`: this worker takes shard K (1-based) of N. */
export function shardOption(raw: unknown): { index: number; count: number } | undefined {
  if (raw === undefined) return undefined;
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(String(raw));
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (!match || count < 1 || index < 1 || index > count) {
    throw new ConfigError(`Invalid option --shard: must be K/N with 1 <= K <= N, such as 2/4, got '${String(raw)}'`);
  }
  return { index, count };
}

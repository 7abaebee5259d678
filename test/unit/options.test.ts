// The one options resolver (src/options/resolve-options.ts): every field validated once, with a
// LeadEnrichError of stable code 'config' whose message names the option, the rule and the value.
import { describe, expect, it } from 'vitest';
import { ConfigError, LeadEnrichError } from '../../src/api/errors.js';
import { DEFAULTS } from '../../src/options/defaults.js';
import { defaultOf } from '../../src/options/registry.js';
import { rateFor } from '../../src/lookup/rate/rate-plan.js';
import { resolveOptions } from '../../src/run/settings.js';
import { enrich } from '../../src/run/enrich.js';

const input = 'contacts.csv';

describe('enrich() options', () => {
  it.each([
    [{ rpm: 1.5 }, 'Invalid option rpm: must be a positive integer, got 1.5'],
    [{ rpm: 0 }, 'Invalid option rpm: must be a positive integer, got 0'],
    [{ concurrency: 0 }, 'Invalid option concurrency: must be a positive integer, got 0'],
    [{ maxAge: 'soon' }, "Invalid option maxAge: must be a duration such as 30d, 12h or 15m, got 'soon'"],
    [{ minCredits: -1 }, 'Invalid option minCredits: must be a whole number, 0 or more, got -1'],
    [{ retries: Number.NaN }, 'Invalid option retries: must be a whole number, 0 or more, got NaN'],
    [{ format: 'xml' }, "Invalid option format: must be one of csv, jsonl, xlsx, got 'xml'"],
    [{ by: 'phone' }, "Invalid option by: must be email, url or domain, or a list of them in the order to try, such as email,url, got 'phone'"],
    [{ by: 'email,email' }, "Invalid option by: email is named twice in 'email,email'; name each kind once"],
    [{ delimiter: ';;' }, "Invalid option delimiter: must be one character such as ; or |, or tab, got ';;'"],
    [{ format: 'csv', output: 'out.jsonl' }, "Invalid option format: csv contradicts the output's name out.jsonl (JSON Lines): drop one of them"],
    [{ with: ['dns'] }, "Invalid option with: must be mx, whois or company, or a list such as mx,company, got 'dns'"],
    [{ shard: { index: 3, count: 2 } }, 'Invalid option shard: must be K/N with 1 <= K <= N, such as 2/4, got {"index":3,"count":2}'],
    [{ tuning: { windowMs: 0 } }, 'Invalid option tuning.windowMs: must be a positive integer, got 0'],
    [{ rmp: 60 }, 'Invalid option rmp: not an option of enrich (see EnrichOptions); did you mean rpm?'],
  ])('rejects %j before anything is opened', async (bad, message) => {
    const error = await enrich({ input, ...(bad as object) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeadEnrichError);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as LeadEnrichError).code).toBe('config');
    expect((error as Error).message).toBe(message);
  });

  it('rejects a missing input, naming it', () => {
    expect(() => resolveOptions({} as never)).toThrow("Invalid option input: must be a CSV path, '-' for stdin, or a readable stream, got undefined");
  });

  it('fills every default from the one table', () => {
    const settings = resolveOptions({ input: 'a/contacts.csv', store: ':memory:' });
    expect(settings.output).toBe('a/contacts.enriched.csv');
    expect(settings.errors).toBe('a/contacts.enriched.errors.csv');
    expect(settings.retries).toBe(DEFAULTS.retries);
    expect(settings.maxAge).toBe(defaultOf('maxAge'));
    expect(defaultOf('maxAge')).toBe(30 * 24 * 60 * 60 * 1000);
    expect(settings.tuning).toMatchObject({ windowMs: DEFAULTS.windowMs, reorderWindow: DEFAULTS.reorderWindow, drainTimeoutMs: DEFAULTS.drainTimeoutMs });
    expect(settings.with).toEqual([]);
  });

  it('reads maxAge as a duration, and still takes the older maxAgeMs', () => {
    expect(resolveOptions({ input, maxAge: '12h' }).maxAge).toBe(12 * 3_600_000);
    expect(resolveOptions({ input, maxAgeMs: 5000 }).maxAge).toBe(5000);
  });

  it('names shard outputs apart, and jsonl outputs by their format', () => {
    expect(resolveOptions({ input: 'in.csv', shard: { index: 2, count: 4 } }).output).toBe('in.enriched.2-of-4.csv');
    expect(resolveOptions({ input: 'in.csv', format: 'jsonl' }).output).toBe('in.enriched.jsonl');
  });

  it('refuses an output that would overwrite the input', () => {
    expect(() => resolveOptions({ input: 'in.csv', output: './in.csv' })).toThrow(/^output would overwrite the input \(in\.csv\): choose another path$/);
  });

  it('takes a .jsonl output name as --format jsonl, and names gzipped outputs for a gzipped input', () => {
    expect(resolveOptions({ input: 'in.csv', output: 'out.jsonl' }).format).toBe('jsonl');
    expect(resolveOptions({ input: 'a/in.csv.gz' })).toMatchObject({ output: 'a/in.enriched.csv.gz', errors: 'a/in.enriched.errors.csv.gz' });
  });
});

describe('rate plan', () => {
  const limits = { rpm: 100, remaining: 40, resetAt: new Date(0), bulkConcurrency: undefined };
  it("is the account's rate and window by default", () => {
    expect(rateFor(undefined, limits)).toEqual({ rpm: 100, facts: limits });
  });
  it('caps what is left of the window at a lower --rpm', () => {
    expect(rateFor(10, limits)).toEqual({ rpm: 10, facts: { remaining: 10, resetAt: limits.resetAt } });
  });
  it('keeps the server window at a higher --rpm (the gate learns the real allowance from 429s)', () => {
    expect(rateFor(500, limits)).toEqual({ rpm: 500, facts: limits });
  });
});

// A row whose retry a stop cuts short was not looked up: it is `skipped` with the stop's code, as
// the rows not started are (docs/cli-contract.md, "Exit status of `enrich`": "the rows not looked
// up are `skipped` with that code"), never `error` with the one transient failure it met before the
// stop. Deterministic: a node:http server on 127.0.0.1 answers the first key's first try 503 at
// once and holds another key's answer, so that its retry is waiting for its slot at the gate (the
// grants 500 ms apart) when the budget refuses the next lookup, or the service answers it 402 (the
// credits are out) or its daily limit (code 1017), and the run stops; the gate drops what waits,
// the retry with it. One test at a time: each closes every server in its afterEach.
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { enrichRows, type RowResult } from '../../src/run/enrich-rows.js';

const servers: http.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

interface Counted {
  baseUrl: string;
  /** Lookups received, per key. */
  lookups: Map<string, number>;
}

/**
 * Account reads at 120 RPM (a grant every 500 ms) and 10,000 credits, 4 less for each lead found;
 * the key `first@` answers 503 once, `slow@` after 2 s, `third@` 402 or the daily limit when
 * `third` says so, the rest found at once.
 */
async function server(third: 'found' | '402' | 'daily_limit'): Promise<Counted> {
  let balance = 10_000;
  const lookups = new Map<string, number>();
  const lead = (email: string) => ({ email_address: email, lead: { name: 'A Person', title: 'Engineer', company: { name: 'Acme', domain: 'acme.test' } } });
  const s = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    res.setHeader('content-type', 'application/json');
    const send = (status: number, body: unknown) => {
      res.statusCode = status;
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/v2/account/credits')
      return send(200, { status: 'success', data: { total_remaining_credits: balance, plan_remaining_credits: {}, low_credit_balance_min_threshold: 0 } });
    if (url.pathname === '/v2/account/limits') {
      const reset = new Date(Date.now() + 60_000).toISOString();
      return send(200, {
        status: 'success',
        data: {
          email_verify: {
            api_rate_limit: { total: '120 RPM', remaining: '120 RPM', next_limit_reset: reset },
            bulk_verify_concurrency_limit: { total: '1', remaining: '1' },
          },
        },
      });
    }
    const email = url.searchParams.get('email_address') ?? '';
    const seen = (lookups.get(email) ?? 0) + 1;
    lookups.set(email, seen);
    if (email.startsWith('first@') && seen === 1) return send(503, { status: 'failed', error: { code: 1001, message: 'Service Unavailable' } });
    if (email.startsWith('third@') && third === '402') return send(402, { status: 'failed', error: { code: 1002, message: 'Insufficient credits' } });
    if (email.startsWith('third@') && third === 'daily_limit') return send(429, { status: 'failed', error: { code: 1017, message: 'Daily limit reached' } });
    const found = () => {
      balance -= 4;
      send(200, { status: 'success', data: lead(email) });
    };
    if (email.startsWith('slow@')) return void setTimeout(found, 2_000);
    found();
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  servers.push(s);
  return { baseUrl: `http://127.0.0.1:${(s.address() as { port: number }).port}/v2`, lookups };
}

const ROWS = ['first@acme.test', 'slow@acme.test', 'third@acme.test', 'fourth@acme.test'].map((email) => ({ email }));

async function resultsOf(options: Parameters<typeof enrichRows>[1]): Promise<RowResult[]> {
  const results: RowResult[] = [];
  for await (const result of enrichRows(ROWS, options)) results.push(result);
  return results;
}

describe("a retry cut short by a stop that binds while it waits: the row is skipped with the stop's code", () => {
  it.each([
    // One person lookup holds 8 against a budget: `slow@` holds 8 of 12, `third@` cannot have 8 more.
    ['--budget', 'budget', 'found', { budget: 12 }],
    ['the credits out (402)', 'credit_reserve', '402', {}],
    ['the daily limit', 'daily_limit', 'daily_limit', {}],
  ] as const)(
    '%s: `first@` met one 503, its retry was dropped at the gate: skipped with %s, not error/server_error',
    async (_name, code, third, limit) => {
      const s = await server(third);
      const results = await resultsOf({
        baseUrl: s.baseUrl,
        token: 'tok-stop-cuts-retry-0123456789',
        store: ':memory:',
        ...limit,
        tuning: { retryBaseDelayMs: 1, retryMaxDelayMs: 2 },
      });
      const first = results[0]!;
      // The retry was never sent: one request for the key, the 503.
      expect(s.lookups.get('first@acme.test')).toBe(1);
      expect({ status: first.status, code: first.error?.code }).toEqual({ status: 'skipped', code });
      expect(first.error?.message).toMatch(/a try before the stop failed: Server error 503/);
      expect(results[1]).toMatchObject({ status: 'found', billing: 'charged' });
      expect(results.filter((r) => r.status === 'error')).toEqual([]);
    },
    20_000,
  );
});

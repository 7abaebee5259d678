// Every row's `error` in enrichRows is an instance of the class docs/library.md lists for its code
// ("Errors": "one subclass per kind, so `instanceof` works too, whatever step threw it"), with the
// `status` and `apiCode` the API gave, and a LeadError still: a malformed key is an
// InvalidInputError, a key the API refuses (400) a BadRequestError (also when the store answers a
// refusal kept before), a 5xx after its retries a ServerError, another 4xx a RequestRejectedError,
// the daily limit a DailyLimitError, a row not looked up after it a DailyLimitError too, and the
// codes with no class of their own (no_key) a RowError. A node:http server on 127.0.0.1 answers
// each key as named.
import http from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BadRequestError, DailyLimitError, InvalidInputError, LeadError, RequestRejectedError, RowError, ServerError } from '../../src/index.js';
import { enrichRows, type RowResult } from '../../src/run/enrich-rows.js';
import { makeTempDir } from '../helpers/files.js';

const servers: http.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** Account reads as a plan's; lookups answered by the key's first word. */
async function server(): Promise<{ baseUrl: string; lookups: () => number }> {
  let lookups = 0;
  const s = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    res.setHeader('content-type', 'application/json');
    const send = (status: number, body: unknown) => {
      res.statusCode = status;
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/v2/account/credits')
      return send(200, { status: 'success', data: { total_remaining_credits: 1000, plan_remaining_credits: {}, low_credit_balance_min_threshold: 0 } });
    if (url.pathname === '/v2/account/limits') {
      return send(200, {
        status: 'success',
        data: {
          email_verify: {
            api_rate_limit: { total: '6000 RPM', remaining: '6000 RPM', next_limit_reset: new Date(Date.now() + 60_000).toISOString() },
            bulk_verify_concurrency_limit: { total: '1', remaining: '1' },
          },
        },
      });
    }
    lookups += 1;
    const email = url.searchParams.get('email_address') ?? '';
    if (email.startsWith('refused'))
      return send(400, {
        status: 'failed',
        error: { code: 1001, message: 'validation failed', reasons: [{ field: ['email_address'], messages: ['"email_address" is not deliverable'] }] },
      });
    if (email.startsWith('failing')) return send(503, { status: 'failed', error: { code: 1099, message: 'try later' } });
    if (email.startsWith('gone')) return send(410, { message: 'gone' });
    if (email.startsWith('limit')) return send(429, { status: 'failed', error: { code: 1017, message: 'Daily limit reached' } });
    if (email.startsWith('forbidden')) return send(403, { status: 'failed', error: { code: 1008, message: 'Not allowed for this token' } });
    send(200, { status: 'success', data: { email_address: email, lead: { name: 'A Person' } } });
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  servers.push(s);
  return { baseUrl: `http://127.0.0.1:${(s.address() as { port: number }).port}/v2`, lookups: () => lookups };
}

async function results(rows: Array<{ email: string }>, options: Parameters<typeof enrichRows>[1]): Promise<RowResult[]> {
  const out: RowResult[] = [];
  for await (const result of enrichRows(rows, options)) out.push(result);
  return out;
}

describe("enrichRows: a row's error is of its code's class", () => {
  it('malformed, refused (400), failing (503), rejected (410), no key, the daily limit and a row after it', async () => {
    const s = await server();
    const store = path.join(makeTempDir(), 'rows.sqlite');
    const options = { baseUrl: s.baseUrl, token: 'tok-row-errors-0123456789', store, retries: 0, concurrency: 1 };
    const rows = ['jane.doe@', 'refused@acme.test', 'failing@acme.test', 'gone@acme.test', '', 'found@acme.test', 'limit@acme.test', 'after@acme.test'].map(
      (email) => ({ email }),
    );
    const [malformed, refused, failing, gone, empty, found, limit, after] = await results(rows, options);

    expect(malformed!.error).toBeInstanceOf(InvalidInputError);
    expect(malformed!.error).toBeInstanceOf(LeadError);
    expect(malformed!.error).toMatchObject({ code: 'invalid_input', status: undefined });

    expect(refused!.error).toBeInstanceOf(BadRequestError);
    expect(refused!.error).toMatchObject({ code: 'bad_request', status: 400, apiCode: 1001 });
    expect((refused!.error as BadRequestError).reasons).toEqual([{ field: ['email_address'], messages: ['"email_address" is not deliverable'] }]);

    expect(failing!.error).toBeInstanceOf(ServerError);
    expect(failing!.error).toMatchObject({ code: 'server_error', status: 503, apiCode: 1099 });

    expect(gone!.error).toBeInstanceOf(RequestRejectedError);
    expect(gone!.error).toMatchObject({ code: 'request_rejected', status: 410 });

    expect(empty!.error).toBeInstanceOf(RowError);
    expect(empty!).toMatchObject({ status: 'skipped', error: { code: 'no_key' } });

    expect(found!).toMatchObject({ status: 'found', error: undefined, stale: undefined });

    expect(limit!.error).toBeInstanceOf(DailyLimitError);
    expect(limit!.error).toMatchObject({ code: 'daily_limit', status: 429, apiCode: 1017 });
    expect(after!.error).toBeInstanceOf(DailyLimitError);
    expect(after!).toMatchObject({ status: 'skipped', error: { code: 'daily_limit' } });

    for (const result of [malformed, refused, failing, gone, empty, limit, after]) expect(result!.error).toBeInstanceOf(LeadError);

    // The refusal kept by the store: a BadRequestError (400) again, with no request.
    const sent = s.lookups();
    const [again] = await results([{ email: 'refused@acme.test' }], options);
    expect(s.lookups()).toBe(sent);
    expect(again!.error).toBeInstanceOf(BadRequestError);
    expect(again!.error).toMatchObject({ code: 'bad_request', status: 400, message: expect.stringContaining('not deliverable') });
  });
});

describe("enrichRows: a 403 is no row's error", () => {
  it('the token may not use the operation: the run stops with it at the first, and no later row is looked up', async () => {
    const api = await server();
    const rows = [{ email: 'forbidden@acme.com' }, { email: 'ann@acme.com' }, { email: 'bob@acme.com' }];
    await expect(
      results(rows, { baseUrl: api.baseUrl, token: 'token-0123456789', store: path.join(makeTempDir(), 's.sqlite'), concurrency: 1 }),
    ).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect(api.lookups()).toBe(1);
  });
});

// --max-errors: a run whose lookups fail (answers the API should not give, for every key) stops
// looking up, finishes what is in flight, writes the rest as skipped/max_errors, and says so (exit
// 4 on the command line). A dead API is another matter: its rows are held, not errors,
// and the run gives up on it after --patience (test/e2e/reliability/api-outage.test.ts); here, it cannot reach the budget.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { enrich } from '../../src/run/enrich.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';
import { accountOnlyServer } from '../helpers/servers.js';

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A server that answers every lookup with a body the interface does not allow (bad_response, retried), counting them. */
async function failingApi() {
  let lookups = 0;
  const server = await accountOnlyServer(() => {
    lookups += 1;
    return { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: 'x', lead: 'nobody' } }) };
  });
  closers.push(server.close);
  return { ...server, lookups: () => lookups };
}

/** A server that fails every lookup with a 500: an API that is down. */
async function deadApi() {
  let lookups = 0;
  const server = await accountOnlyServer(() => {
    lookups += 1;
    return { status: 500, body: JSON.stringify({ status: 'failed', error: { code: 500, message: 'Internal Server Error' } }) };
  });
  closers.push(server.close);
  return { ...server, lookups: () => lookups };
}

describe('--max-errors', () => {
  it('stops looking up after more than N rows are errors: at most N + in flight are errors, the rest skipped with max_errors', async () => {
    const api = await failingApi();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(300, 'dead').map((e) => [e])]);
    const summary = await enrich({
      input,
      baseUrl: api.baseUrl,
      token: 't',
      store: ':memory:',
      maxErrors: 10,
      retries: 4,
      concurrency: 4,
      tuning: { retryBaseDelayMs: 1, retryMaxDelayMs: 2 },
    });
    expect(summary.stoppedBy).toBe('max_errors');
    expect(summary.rows).toBe(300);
    expect(summary.status.error).toBeGreaterThan(10);
    // While a row waits for its retry its slot starts other rows: when the limit is passed, dozens
    // of rows have had a try and wait for the next. Their retries are cut short and they are
    // skipped (not finished), not errors: the contract's N + what is in flight (4).
    expect(summary.status.error).toBeLessThanOrEqual(10 + 4);
    expect(summary.errorCodes.max_errors).toBe(300 - summary.status.error);
    expect(summary.requests).toBe(api.lookups());
    const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
    expect(sidecar).toHaveLength(300);
    // enrich() called by a program: the option as it passed it (the command line's sidecar says --max-errors).
    expect(sidecar.at(-1)).toMatchObject({ row: '300', error_code: 'max_errors', error_message: 'not looked up: the run stopped at maxErrors' });
    // A row whose retry was cut short says what its try met.
    const cut = sidecar.filter((r) => r.error_code === 'max_errors' && r.error_message!.includes('a try before the stop failed'));
    expect(cut.length).toBeGreaterThan(0);
    expect(cut[0]!.error_message).toMatch(/^not looked up: the run stopped at maxErrors \(a try before the stop failed: .+\)$/);
    // Every request belongs to a row that was an error or was cut short: none to a row never tried.
    expect(api.lookups()).toBeLessThanOrEqual((summary.status.error + cut.length) * 5);
  });

  it('judges a percentage only after 50 rows were looked up', async () => {
    let n = 0;
    // Every third lookup fails (an answer of the wrong shape, the API's fault): 33 % of rows.
    const api = await accountOnlyServer(() => {
      n += 1;
      return n % 3 === 0
        ? { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: 'x', lead: 'nobody' } }) }
        : { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: 'x', lead: {} } }) };
    });
    closers.push(api.close);
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(200, 'pct').map((e) => [e])]);
    const options = { input, baseUrl: api.baseUrl, token: 't', store: ':memory:', concurrency: 1, retries: 0 } as const;
    const within = await enrich({ ...options, output: path.join(dir, 'a.csv'), maxErrors: '40%' });
    expect(within.stoppedBy).toBeUndefined();
    expect(within.status.not_found + within.status.error).toBe(200);
    const over = await enrich({ ...options, output: path.join(dir, 'b.csv'), maxErrors: '20%' });
    expect(over.stoppedBy).toBe('max_errors');
    // Not before 50 looked up, and soon after (one in flight at a time).
    const lookedUp = over.status.not_found + over.status.error;
    expect(lookedUp).toBeGreaterThanOrEqual(50);
    expect(lookedUp).toBeLessThanOrEqual(52);
  });

  it('a dead API does not reach it: its rows are held, not errors, until the run gives up after --patience (at most N + in flight are errors)', async () => {
    const api = await deadApi();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(300, 'dead').map((e) => [e])]);
    const summary = await enrich({
      input,
      baseUrl: api.baseUrl,
      token: 't',
      store: ':memory:',
      maxErrors: 10,
      concurrency: 4,
      patience: '2s',
      tuning: { retryBaseDelayMs: 1, retryMaxDelayMs: 2 },
    });
    expect(summary.stoppedBy).toBe('api_unavailable');
    expect(summary.rows).toBe(300);
    expect(summary.status.error).toBeLessThanOrEqual(10 + 4);
    expect(summary.errorCodes.api_unavailable).toBe(300 - summary.status.error);
    expect(api.lookups()).toBeLessThanOrEqual(30);
  });

  it("does not count the file's own problems: malformed keys (never looked up) and keys the API refuses (400)", async () => {
    let n = 0;
    const refusing = await accountOnlyServer(() => {
      n += 1;
      return n % 2 === 0
        ? { status: 400, body: JSON.stringify({ status: 'failed', error: { message: 'validation failed', reasons: [{ messages: ['"email" is invalid'] }] } }) }
        : { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: 'x', lead: {} } }) };
    });
    closers.push(refusing.close);
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(120, 'half').map((e) => [e])]);
    const summary = await enrich({ input, baseUrl: refusing.baseUrl, token: 't', store: ':memory:', maxErrors: '5%', concurrency: 1 });
    expect(summary.stoppedBy).toBeUndefined();
    expect(summary.errorCodes.bad_request).toBe(60);
    expect(summary.fileErrors).toBe(60);
  });

  it('does not count malformed keys: they were never looked up', async () => {
    const api = await deadApi();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...Array.from({ length: 30 }, (_, i) => [`broken${i}@`])]);
    const summary = await enrich({ input, baseUrl: api.baseUrl, token: 't', store: ':memory:', maxErrors: 5 });
    expect(summary.stoppedBy).toBeUndefined();
    expect(summary.errorCodes.invalid_input).toBe(30);
    expect(api.lookups()).toBe(0);
  });

  it('rejects a value that is not a count or a percentage, naming it', async () => {
    await expect(enrich({ input: 'x.csv', maxErrors: 'many' })).rejects.toThrow(
      "Invalid option maxErrors: must be a whole number of rows such as 10, or a percentage such as 5%, got 'many'",
    );
  });
});

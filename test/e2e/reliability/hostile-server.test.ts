// Scenario 6, hostile server: tiny servers on 127.0.0.1 whose account operations behave and whose
// lookups misbehave in one way each, for ever. Every row must end `error` with the code docs/reference.md
// gives for that failure after exactly --retries retries, the run must finish with exit 2 (or 1
// with one line when the account reads themselves fail), and nothing may hang.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lines, runCli } from '../../helpers/cli.js';
import { makeTempDir, readCsvObjects, writeCsv } from '../../helpers/files.js';
import { closeAll, envFor, expectNoCrash, expectNoSecret, tinyServer, type LookupHandler } from './support.js';
import { hangBound } from '../../helpers/processes.js';

afterAll(closeAll);

const MiB = 1024 * 1024;
const html =
  (status: number, contentType = 'text/html'): LookupHandler =>
  (_req, res) => {
    const body = `<!DOCTYPE html><html><head><title>${status}</title></head><body><h1>Bad Gateway</h1><p>nginx</p></body></html>`;
    res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
const json =
  (status: number, body: unknown, contentType = 'application/json'): LookupHandler =>
  (_req, res) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
/** A success body far above the 8 MiB cap: with a Content-Length, or chunked until the client hangs up. */
const oversized =
  (chunked: boolean): LookupHandler =>
  (req, res) => {
    const filler = 'x'.repeat(64 * 1024);
    const head = '{"status":"success","data":{"email_address":"a@b.c","lead":{"name":"';
    const tail = '"}}}';
    const chunks = Math.ceil((9 * MiB) / filler.length);
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(chunked ? {} : { 'content-length': head.length + chunks * filler.length + tail.length }),
    });
    res.write(head);
    let sent = 0;
    const pump = (): void => {
      while (sent < chunks && !res.destroyed) {
        sent += 1;
        if (!res.write(filler)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end(tail);
    };
    req.socket.on('close', () => (sent = chunks));
    pump();
  };
/** 200 and a body that never ends: a byte every 50 ms. */
const trickle: LookupHandler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"status":"success","data":{"lead":{"name":"');
  const timer = setInterval(() => res.write('a'), 50);
  req.socket.on('close', () => clearInterval(timer));
};
/** Headers promise 1000 bytes; 20 come, then the connection drops. */
const cutShort: LookupHandler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 });
  res.write('{"status":"success",');
  setTimeout(() => req.socket.destroy(), 20);
};
const reset: LookupHandler = (req) => req.socket.destroy();

const cases: Array<[name: string, code: string, handler: LookupHandler]> = [
  ['a body over the 8 MiB cap, with Content-Length', 'bad_response', oversized(false)],
  ['a body over the 8 MiB cap, chunked', 'bad_response', oversized(true)],
  ['a body that trickles forever', 'timeout', trickle],
  ['an HTML error page at 502', 'server_error', html(502)],
  ['an HTML page at 200', 'bad_response', html(200)],
  ['an HTML body labelled application/json', 'bad_response', html(200, 'application/json')],
  ['{"status":"failed"} at 200, for ever', 'api_failed', json(200, { status: 'failed' })],
  ['524 "Timeout Occurred"', 'server_error', json(524, { status: 'failed', error: { message: 'Timeout Occurred', additional_info: {} } })],
  ['a 200 whose data is an array', 'bad_response', json(200, { status: 'success', data: [] })],
  ['a 200 without data', 'bad_response', json(200, { status: 'success' })],
  ['a body cut short', 'bad_response', cutShort],
  ['a connection reset', 'network', reset],
];

const RETRIES = 2;
const KEYS = ['ann@acme.com', 'ben@acme.com', 'cy@acme.com'];

describe('hostile server: lookups misbehave for ever', () => {
  it.concurrent.each(cases)(
    '%s: every row `error` with %s after the retries, exit 2, nothing hangs',
    async (_name, code, handler) => {
      const server = await tinyServer(handler);
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...KEYS.map((k) => [k])]);
      const started = Date.now();
      // Only the body that never ends is about the request timeout, and needs a short one for the
      // run to end soon. The others are refused for what they send, so they get a timeout that the
      // twelve runs at once on a loaded machine cannot reach: a 9 MiB body read in 800 ms came back
      // as `timeout`, not `bad_response`.
      const requestTimeout = code === 'timeout' ? '800' : '10000';
      const result = await runCli(['enrich', input, '--retries', String(RETRIES), '--request-timeout', requestTimeout, '--json'], {
        env: envFor(server, dir),
        timeoutMs: 45_000,
      });
      const took = Date.now() - started;
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(2);
      const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
      expect(rows.map((r) => [r.email, r.lead_status, r.lead_billing])).toEqual(KEYS.map((k) => [k, 'error', 'none']));
      const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
      expect(sidecar.map((r) => [r.row, r.error_code])).toEqual(KEYS.map((_, i) => [String(i + 1), code]));
      expect(sidecar.every((r) => (r.error_message ?? '').length > 0)).toBe(true);
      // Exactly the retries asked for: no more (a loop), no fewer (given up early).
      expect(server.hits.get('/v2/reverse_lookup/email')).toBe(KEYS.length * (RETRIES + 1));
      const summary = JSON.parse(result.stdout);
      expect(summary.errorCodes).toEqual({ [code]: KEYS.length });
      expect(summary.retries).toBe(KEYS.length * RETRIES);
      // Nothing hangs: the trickle ends at its 0.8 s timeouts and the backoff (0.5 s, then 1 s, with
      // jitter), a few seconds; every other case ends on what the server sent, within the time its
      // attempts' timeouts would take (reading 8 MiB three times took 15.5 s at a load average of 20).
      expect(took).toBeLessThan(code === 'timeout' ? 15_000 : (RETRIES + 1) * 10_000);
      expectNoSecret([result.stdout, result.stderr], [dir]);
    },
    hangBound(60_000),
  );
});

describe('hostile server: a wrong content type', () => {
  // The body decides, not its label: a well-formed answer is read whatever Content-Type says
  // (an HTML body labelled JSON is a bad_response, above), so no row is lost to a proxy's label.
  it.concurrent.each(['text/html; charset=utf-8', 'text/plain', 'application/octet-stream'])(
    'a well-formed answer labelled %s is read: every row found, exit 0',
    async (contentType) => {
      const lead = { id: 'L1', name: 'Ann Example', title: 'CTO', company_name: 'Acme', company_domain: 'acme.com' };
      const server = await tinyServer(json(200, { status: 'success', data: { email_address: 'x', lead } }, contentType));
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...KEYS.map((k) => [k])]);
      const result = await runCli(['enrich', input, '--json'], { env: envFor(server, dir), timeoutMs: 30_000 });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(0);
      const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
      expect(rows.map((r) => [r.email, r.lead_status, r.lead_name])).toEqual(KEYS.map((k) => [k, 'found', 'Ann Example']));
      expectNoSecret([result.stdout, result.stderr], [dir]);
    },
    30_000,
  );
});

describe('hostile server: the account reads before the first lookup fail', () => {
  const limitsTrickle: LookupHandler = (req, res) => trickle(req, res);
  // A body that is not the API's is an address that is not the API: exit 1 at once. (A read that
  // times out is the API down: waited for, below.)
  it.concurrent.each<[string, { credits?: LookupHandler; limits?: LookupHandler }, RegExp]>([
    ['/account/credits answers an HTML page', { credits: html(200) }, /Cannot read the account before starting: .*not a JSON object/],
    ['/account/limits has no readable rate limit', { limits: json(200, { status: 'success', data: { email_verify: {} } }) }, /limits/],
  ])(
    '%s: exit 1 with one line, no output, no lookup',
    async (_name, account, message) => {
      const server = await tinyServer(json(200, { status: 'success', data: { lead: {} } }), account);
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...KEYS.map((k) => [k])]);
      const result = await runCli(['enrich', input, '--retries', String(RETRIES), '--request-timeout', '800'], { env: envFor(server, dir), timeoutMs: 30_000 });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(1);
      expect(lines(result.stderr), result.stderr).toHaveLength(1);
      expect(result.stderr).toMatch(message);
      expect([...server.hits.keys()].every((p) => p.startsWith('/v2/account/'))).toBe(true);
      expect(readdirOutputs(dir)).toEqual([]);
      expectNoSecret([result.stdout, result.stderr], [dir]);
    },
    hangBound(40_000),
  );
});

describe('hostile server: an account read that never completes is the API down', () => {
  it(
    '/account/limits trickles for ever: waited for as an outage, then exit 2 after --patience, every row written skipped api_unavailable, no lookup',
    async () => {
      const server = await tinyServer(json(200, { status: 'success', data: { lead: {} } }), { limits: (req, res) => trickle(req, res) });
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...KEYS.map((k) => [k])]);
      const result = await runCli(['enrich', input, '--retries', String(RETRIES), '--request-timeout', '800', '--patience', '3s'], {
        env: envFor(server, dir),
        timeoutMs: 30_000,
      });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/The API is unavailable \(No complete answer from \/account\/limits within the timeout\)/);
      expect(result.stderr).toMatch(/The API stayed unavailable for 3s/);
      expect([...server.hits.keys()].every((p) => p.startsWith('/v2/account/'))).toBe(true);
      const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
      expect(sidecar.map((r) => r.error_code)).toEqual(KEYS.map(() => 'api_unavailable'));
      expectNoSecret([result.stdout, result.stderr], [dir]);
    },
    hangBound(40_000),
  );
});

function readdirOutputs(dir: string): string[] {
  return fs.readdirSync(dir).filter((f) => f !== 'in.csv' && !f.startsWith('store.sqlite'));
}

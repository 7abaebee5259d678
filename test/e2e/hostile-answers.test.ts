// Answers made to hurt, from small node:http servers on 127.0.0.1: compression bombs (a few
// kilobytes that decode to 64 MB, made at test time), absurd rate-limit waits, and a server that
// echoes the token back as lead data. Each must end as an ordinary answer would: a row with its
// code, or one line at start, never a crash, a hang or the token in a file.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadResponseError, RateLimitedError, RateLimitedTooLongError } from '../../src/api/errors.js';
import { MAX_RATE_WAIT_MS } from '../../src/api/limits.js';
import { parseResponse } from '../../src/api/transport.js';
import { MAX_TIMER_MS, sleep } from '../../src/core/clock.js';
import { LeadClient } from '../../src/lookup/lead-client.js';
import { RateGate } from '../../src/lookup/rate/rate-gate.js';
import { lines, runCli } from '../helpers/cli.js';
import { makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';
import { closeAll, envFor, expectNoCrash, expectNoSecret, SECRET, tinyServer, type LookupHandler } from './reliability/support.js';
import { hangBound } from '../helpers/processes.js';

const dirs: string[] = [];
const clients: LeadClient[] = [];
function tempDir(): string {
  const dir = makeTempDir();
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await closeAll();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const MiB = 1024 * 1024;
type Coding = 'br' | 'zstd' | 'gzip' | 'deflate';
const ENCODE: Record<Coding, (input: Buffer) => Buffer> = {
  // Quality 1: a 64 MB bomb in a few milliseconds (the default, 11, takes seconds).
  br: (input) => zlib.brotliCompressSync(input, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } }),
  zstd: (input) => zlib.zstdCompressSync(input),
  gzip: (input) => zlib.gzipSync(input),
  deflate: (input) => zlib.deflateSync(input),
};

/** A JSON answer whose lead name is 64 MB of zeros (valid JSON, were it ever decoded whole). */
const BOMB_PLAIN = Buffer.concat([Buffer.from('{"status":"success","data":{"lead":{"name":"'), Buffer.alloc(64 * MiB, '0'), Buffer.from('"}}}')]);
const bombs = new Map<Coding, Buffer>();
beforeAll(() => {
  for (const coding of Object.keys(ENCODE) as Coding[]) bombs.set(coding, ENCODE[coding](BOMB_PLAIN));
});

function sendEncoded(res: http.ServerResponse, coding: string, body: Buffer): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding, 'content-length': body.length });
  res.end(body);
}
const bomb =
  (coding: Coding): LookupHandler =>
  (_req, res) =>
    sendEncoded(res, coding, bombs.get(coding)!);

/** A server answering every request with `handle`, and what it was asked (headers). */
async function plainServer(handle: LookupHandler): Promise<{ baseUrl: string; seen: http.IncomingHttpHeaders[]; close(): Promise<void> }> {
  const seen: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v2`,
    seen,
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
  };
}

function client(baseUrl: string, maxBodyBytes?: number): LeadClient {
  const c = new LeadClient({ baseUrl, token: SECRET, retry: false, ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }) });
  clients.push(c);
  return c;
}

describe('compressed answers: the body cap counts decoded bytes', () => {
  const lead = { id: 'L1', name: 'Ann Example' };
  const small = Buffer.from(JSON.stringify({ status: 'success', data: { email_address: 'ann@acme.com', lead } }));

  it('a raw deflate answer (no zlib header, as some servers send "deflate") is read too', async () => {
    const server = await plainServer((_req, res) => sendEncoded(res, 'deflate', zlib.deflateRawSync(small)));
    try {
      expect((await client(server.baseUrl).lookupEmail('ann@acme.com')).lead).toEqual(lead);
    } finally {
      await server.close();
    }
  });

  it.each(Object.keys(ENCODE) as Coding[])('a %s answer is read, and the request says it accepts each coding it can decode', async (coding) => {
    const server = await plainServer((_req, res) => sendEncoded(res, coding, ENCODE[coding](small)));
    try {
      const data = await client(server.baseUrl).lookupEmail('ann@acme.com');
      expect(data.lead).toEqual(lead);
      expect(String(server.seen[0]!['accept-encoding']).split(', ').sort()).toEqual(['br', 'deflate', 'gzip', 'zstd']);
    } finally {
      await server.close();
    }
  });

  it.each(Object.keys(ENCODE) as Coding[])('a %s bomb (64 MB decoded) past a 1 MiB cap: bad_response naming the cap, no crash', async (coding) => {
    expect(bombs.get(coding)!.length).toBeLessThan(MiB / 8);
    const server = await plainServer(bomb(coding));
    try {
      const error = await client(server.baseUrl, MiB)
        .lookupEmail('ann@acme.com')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BadResponseError);
      expect((error as Error).message).toBe(`Response from /reverse_lookup/email exceeded ${MiB} bytes once decoded (${coding}); refused`);
    } finally {
      await server.close();
    }
  });

  it('stacked codings are decoded within the cap at every step; more than two, or one not asked for, is bad_response', async () => {
    const twice = zlib.gzipSync(ENCODE.br(BOMB_PLAIN));
    let answer: [string, Buffer] = ['br, gzip', twice];
    const server = await plainServer((_req, res) => sendEncoded(res, answer[0], answer[1]));
    try {
      const api = client(server.baseUrl, MiB);
      await expect(api.lookupEmail('a@acme.com')).rejects.toThrow(/exceeded 1048576 bytes once decoded \(br\)/);
      answer = ['br, gzip', zlib.gzipSync(ENCODE.br(small))];
      expect((await api.lookupEmail('a@acme.com')).lead).toEqual(lead);
      answer = ['gzip, gzip, gzip', zlib.gzipSync(zlib.gzipSync(zlib.gzipSync(small)))];
      await expect(api.lookupEmail('a@acme.com')).rejects.toThrow('could not be decoded: 3 stacked content codings (gzip, gzip, gzip)');
      answer = ['compress', small];
      await expect(api.lookupEmail('a@acme.com')).rejects.toThrow("could not be decoded: content coding 'compress', which was not asked for");
      answer = ['gzip', Buffer.from('not gzip at all')];
      await expect(api.lookupEmail('a@acme.com')).rejects.toThrow(/could not be decoded: gzip: /);
    } finally {
      await server.close();
    }
  });
});

/** Files the run left in `dir` besides its input, outputs and store: partial files, locks. */
function leftovers(dir: string): string[] {
  return fs.readdirSync(dir).filter((f) => !['in.csv', 'in.enriched.csv', 'in.enriched.errors.csv'].includes(f) && !f.startsWith('store.sqlite'));
}

describe('compression bombs through the CLI (the 8 MiB cap)', () => {
  const KEYS = ['ann@acme.com', 'ben@acme.com'];

  it.concurrent.each<Coding>(['br', 'zstd'])(
    'a %s bomb as every lookup answer: each row bad_response, exit 2, no partial or lock file left',
    async (coding) => {
      const server = await tinyServer(bomb(coding));
      const dir = tempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...KEYS.map((k) => [k])]);
      const result = await runCli(['enrich', input, '--retries', '0', '--json'], { env: envFor(server, dir), timeoutMs: 60_000 });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(2);
      const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
      expect(sidecar.map((r) => r.error_code)).toEqual(['bad_response', 'bad_response']);
      expect(sidecar[0]!.error_message).toContain(`exceeded ${8 * MiB} bytes once decoded (${coding})`);
      expect(leftovers(dir)).toEqual([]);
      expectNoSecret([result.stdout, result.stderr], [dir]);
    },
    hangBound(70_000),
  );

  it.concurrent.each<Coding>(['br', 'zstd'])(
    'a %s bomb as the first account answer: exit 1, one line, nothing written',
    async (coding) => {
      const server = await tinyServer((_req, res) => res.end('{}'), { credits: bomb(coding) });
      const dir = tempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...KEYS.map((k) => [k])]);
      const result = await runCli(['enrich', input, '--retries', '0'], { env: envFor(server, dir), timeoutMs: 60_000 });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(1);
      expect(lines(result.stderr), result.stderr).toHaveLength(1);
      expect(result.stderr).toContain(`exceeded ${8 * MiB} bytes once decoded (${coding})`);
      expect(server.hits.get('/v2/reverse_lookup/email')).toBeUndefined();
      expect(fs.readdirSync(dir).filter((f) => !f.startsWith('store.sqlite'))).toEqual(['in.csv']);
    },
    hangBound(70_000),
  );
});

/** The warnings Node emitted while `run` ran and a few ticks after (they come on the next tick). */
async function warningsDuring(run: () => Promise<void> | void): Promise<string[]> {
  const seen: string[] = [];
  const note = (warning: Error) => seen.push(warning.name);
  process.on('warning', note);
  try {
    await run();
    await new Promise((resolve) => setTimeout(resolve, 20));
  } finally {
    process.off('warning', note);
  }
  return seen;
}

describe('absurd waits are bounded', () => {
  const TEN_YEARS_S = 315_360_000;
  const now = Date.parse('2026-11-27T08:00:00Z');
  const limited = (headers: Record<string, string>, message = 'Too many requests') =>
    (() => {
      try {
        parseResponse(429, headers, JSON.stringify({ status: 'failed', error: { code: 1030, message } }), '/x', now);
      } catch (error) {
        return error;
      }
      throw new Error('no failure');
    })();

  it('a Retry-After, x-ratelimit-reset or 1030 "Retry after" past one hour is the API unavailable (transient, rate_limited), not a wait', () => {
    const far = new Date(now + TEN_YEARS_S * 1000)
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC');
    for (const error of [
      limited({ 'retry-after': String(TEN_YEARS_S) }),
      limited({}, `Too many requests. Retry after ${far}`),
      limited({ 'x-ratelimit-reset': String(Math.round(now / 1000) + TEN_YEARS_S) }),
      limited({ 'retry-after': String(MAX_RATE_WAIT_MS / 1000 + 60) }),
    ]) {
      expect(error).toBeInstanceOf(RateLimitedTooLongError);
      expect((error as RateLimitedTooLongError).code).toBe('rate_limited');
      expect((error as Error).message).toMatch(
        /^Rate limited \(429 Too Many Requests: Too many requests.*\) for \d+ (days|hours), past the 1-hour bound: taken as the API being unavailable$/,
      );
    }
    // Up to the bound the hint is honoured as it is.
    const hour = limited({ 'retry-after': String(MAX_RATE_WAIT_MS / 1000) }) as RateLimitedError;
    expect(hour).toBeInstanceOf(RateLimitedError);
    expect(hour.retryAt?.getTime()).toBe(now + MAX_RATE_WAIT_MS);
  });

  it("the rate gate pauses at most an hour whatever it is told, and arms no timer past Node's reach", async () => {
    const warnings = await warningsDuring(async () => {
      const gate = new RateGate({ rpm: 60, windowMs: 2 ** 32 });
      gate.pause(new Date(Date.now() + TEN_YEARS_S * 1000));
      expect(gate.pausedUntil! - Date.now()).toBeLessThanOrEqual(MAX_RATE_WAIT_MS);
      expect(gate.pausedUntil! - Date.now()).toBeGreaterThan(MAX_RATE_WAIT_MS - 60_000);
      await gate.stop();
    });
    expect(warnings).toEqual([]);
  });

  it('a sleep past 2^31-1 ms (a 30-day --patience) neither warns nor ends at once', async () => {
    const stop = new AbortController();
    let ended = false;
    const warnings = await warningsDuring(async () => {
      const sleeping = sleep(MAX_TIMER_MS + 5_000, stop.signal).then(() => (ended = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(ended).toBe(false);
      stop.abort();
      await sleeping;
    });
    expect(warnings).toEqual([]);
  });

  it(
    'Retry-After: 315360000 on every lookup: the run ends within --patience plus a little, rows skipped, exit 2, no timer warning',
    async () => {
      const server = await tinyServer((_req, res) => {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(TEN_YEARS_S) });
        res.end(JSON.stringify({ status: 'failed', error: { code: 1030, message: 'Too many requests' } }));
      });
      const dir = tempDir();
      const keys = Array.from({ length: 12 }, (_, i) => `p${i}@acme.com`);
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...keys.map((k) => [k])]);
      const started = Date.now();
      const result = await runCli(['enrich', input, '--patience', '3s', '--json'], { env: envFor(server, dir), timeoutMs: 60_000 });
      const took = Date.now() - started;
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(2);
      expect(took).toBeLessThan(3_000 + 20_000);
      expect(lines(result.stderr).filter((line) => /warning/i.test(line))).toEqual([]);
      // Two availability lines and the summary: no line per retry or per timer.
      expect(lines(result.stderr).length, result.stderr).toBeLessThan(20);
      expect(result.stderr).toContain('for 3650 days, past the 1-hour bound: taken as the API being unavailable');
      const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
      expect(sidecar.map((r) => r.error_code)).toEqual(keys.map(() => 'api_unavailable'));
      // Each of those answers was a 429, and the summary counts it as one.
      const summary = JSON.parse(result.stdout);
      expect(summary.rateLimited).toBe(summary.requests);
      expect(summary.rateLimited).toBeGreaterThan(0);
      expectNoSecret([result.stdout, result.stderr], [dir]);
    },
    hangBound(70_000),
  );
});

describe('a server that echoes the token back as lead data', () => {
  /** The Authorization token as the lead's name, spelt with JSON escapes in its title and as a key. */
  const echo: LookupHandler = (req, res) => {
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const escaped = [...token].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    const email = new URL(req.url!, 'http://x').searchParams.get('email_address');
    const lead = `{"id":"L1","name":"Ann ${token}","title":"CTO ${escaped}","phones":[{"${token}":"x"}]}`;
    const body = `{"status":"success","data":{"email_address":${JSON.stringify(email)},"lead":${lead}}}`;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };

  it('the library gets it masked, however the JSON spells it', async () => {
    const server = await tinyServer(echo);
    const data = (await client(server.baseUrl).lookupEmail('ann@acme.com')) as unknown as { lead: Record<string, unknown> };
    expect(data.lead).toEqual({ id: 'L1', name: 'Ann ***', title: 'CTO ***', phones: [{ '***': 'x' }] });
  });

  it.concurrent.each(['csv', 'jsonl'])(
    'it is masked before the %s output and the store get it',
    async (format) => {
      const server = await tinyServer(echo);
      const dir = tempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com'], ['ben@acme.com']]);
      const run = () => runCli(['enrich', input, '--format', format, '--json'], { env: envFor(server, dir), timeoutMs: 30_000 });
      const result = await run();
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(0);
      const out = fs.readFileSync(path.join(dir, `in.enriched.${format}`), 'utf8');
      expect(out).toContain('Ann ***');
      expect(out).toContain('CTO ***');
      // A second run reads the answers from the store: masked there too.
      const again = await run();
      expect(again.code, again.stderr).toBe(0);
      expect(server.hits.get('/v2/reverse_lookup/email')).toBe(2);
      const fromStore = fs.readFileSync(path.join(dir, `in.enriched.${format}`), 'utf8');
      expect(fromStore).toContain('cached');
      expect(fromStore.split('Ann ***')).toHaveLength(3);
      expectNoSecret([result.stdout, result.stderr, again.stdout, again.stderr], [dir]);
    },
    hangBound(40_000),
  );
});

// The API client against real HTTP: the sandbox (src/sandbox/server.ts) for the interface's
// ordinary behaviour and faults, and tiny node:http servers on 127.0.0.1 for what the sandbox
// does not do (odd statuses, odd bodies, contradictory rate-limit hints). No mocks.
// Every failure is collected and, at the end, checked for the token (cli-contract: "never printed").
// Each test makes its own client (beforeEach): a client made in a beforeAll runs the transport's
// constructor outside any test, which makes StrykerJS run every test for each of its mutants.
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isLeadFound } from '../../src/api/client.js';
import { RESOLVE_TIMEOUT_MAX_MS, validateResolveTimeout } from '../../src/api/resolve-timeout.js';
import { LeadClient } from '../../src/lookup/lead-client.js';
import {
  ApiFailedError,
  BadRequestError,
  BadResponseError,
  ClientClosedError,
  ConfigError,
  InvalidInputError,
  LeadEnrichError,
  NetworkError,
  PaymentRequiredError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
} from '../../src/api/errors.js';
import { parseLimitCount, parseServiceLimits, parseTimestamp, rateHeadersFrom, retryAtFrom } from '../../src/api/limits.js';
import { parseResponse, Transport } from '../../src/api/transport.js';
import { validateBaseUrl } from '../../src/api/base-url.js';
import { ACCEPT_ENCODING } from '../../src/api/decode-body.js';
import type { ServiceLimits } from '../../src/api/types.js';
import { normalizeSandboxKey, sandboxAnswer, type SandboxKeyOperation } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';

const TOKEN = 'tok-SECRET-zq81';

/** Half an hour from now, in whole seconds: a rate-limit hint within the 1-hour bound. */
function inHalfAnHour(): Date {
  return new Date(Math.floor(Date.now() / 1000) * 1000 + 30 * 60_000);
}
/** "2026-11-27 08:00:00 UTC", the form of the code-1030 message. */
function utcText(at: Date): string {
  return at
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** Every error any test below produced: checked for the token by the last describe block. */
const collected: unknown[] = [];

type ErrorClass<E> = abstract new (...args: never[]) => E;

/** Awaits a failure, checks its class and stable code, and keeps it for the token check. */
async function failure<E extends LeadEnrichError>(promise: Promise<unknown>, cls: ErrorClass<E>, code: string): Promise<E> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  collected.push(caught);
  expect(caught, 'the call should have failed').toBeInstanceOf(cls);
  expect((caught as LeadEnrichError).code).toBe(code);
  return caught as E;
}

/** The same, for synchronous throws (constructors, validators). */
function failureSync<E extends LeadEnrichError>(fn: () => unknown, cls: ErrorClass<E>, code: string): E {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  collected.push(caught);
  expect(caught, 'the call should have thrown').toBeInstanceOf(cls);
  expect((caught as LeadEnrichError).code).toBe(code);
  return caught as E;
}

const sandboxes: Sandbox[] = [];
const clients: LeadClient[] = [];

async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const sb = await startSandbox({ port: 0, token: TOKEN, ...options });
  sandboxes.push(sb);
  return sb;
}

/**
 * Single attempts (`retry: false`): these tests are about what one request's failure becomes.
 * Retrying and pacing are tested in lead-client.test.ts.
 */
function client(baseUrl: string, options: { timeoutMs?: number; maxBodyBytes?: number; token?: string; userAgent?: string } = {}): LeadClient {
  const c = new LeadClient({ baseUrl, token: options.token ?? TOKEN, retry: false, ...options });
  clients.push(c);
  return c;
}

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Tiny {
  baseUrl: string;
  seen: Seen[];
  /** Replaced by each test: answers every request. */
  handle: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1, port 0, whose behaviour each test sets through `handle`. */
async function tinyServer(): Promise<Tiny> {
  const sockets = new Set<Socket>();
  const tiny: Tiny = {
    baseUrl: '',
    seen: [],
    handle: (_req, res) => {
      res.writeHead(500);
      res.end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      tiny.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      tiny.handle(req, res, body);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tiny.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2`;
  return tiny;
}

/** 'closed' once the socket closes, or 'still open' after 2 s: a socket close() left open holds the process. */
function closing(socket: Socket): Promise<string> {
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve('closed')));
  return Promise.race([closed, new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 2_000))]);
}

function json(res: http.ServerResponse, status: number, value: unknown, headers: http.OutgoingHttpHeaders = {}): void {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** A key of the form `make(i)` that the sandbox answers as found (pure data rules, no HTTP). */
function foundKey(op: SandboxKeyOperation, make: (i: number) => string): string {
  for (let i = 0; i < 1000; i++) {
    const key = make(i);
    if (sandboxAnswer(op, normalizeSandboxKey(op, key)).kind === 'found') return key;
  }
  throw new Error('no found key');
}

function expected(op: SandboxKeyOperation, key: string): unknown {
  const answer = sandboxAnswer(op, normalizeSandboxKey(op, key));
  if (answer.kind === 'rejected') throw new Error('rejected key');
  return answer.data;
}

afterAll(async () => {
  for (const c of clients) c.close();
  await Promise.all(sandboxes.map((s) => s.close()));
});

// ---------------------------------------------------------------------------------------------

describe('the eight operations against the sandbox', () => {
  let sb: Sandbox;
  let api: LeadClient;
  beforeAll(async () => {
    sb = await sandbox();
  });
  beforeEach(() => {
    api = client(sb.baseUrl);
  });

  it('lookupEmail: a person lead with the interface spellings', async () => {
    const email = foundKey('lookup_email', (i) => `Person${i}@Acme.com`);
    const data = await api.lookupEmail(email);
    expect(data).toEqual(expected('lookup_email', email));
    expect(data.email_address).toBe(email.toLowerCase());
    expect(isLeadFound(data)).toBe(true);
    expect(data.lead.type).toBe('person');
    expect(data.lead.contructed_title).toBe(`${data.lead.title} at ${data.lead.company_name}`);
    expect(Array.isArray(data.lead.addresses)).toBe(true);
    expect(typeof data.lead.total_experience_in_months).toBe('number');
  });

  it('lookupUrl: a person lead by profile URL', async () => {
    const url = foundKey('lookup_url', (i) => `https://network.example/in/someone-${i}`);
    const data = await api.lookupUrl(url);
    expect(data).toEqual(expected('lookup_url', url));
    expect(data.lead.network_url).toBe(url);
    expect(typeof data.lead.contructed_title).toBe('string');
  });

  it('lookupDomain: a company lead whose addresses is one object', async () => {
    const name = foundKey('lookup_domain', (i) => `company-${i}.com`);
    const data = await api.lookupDomain(name);
    expect(data).toEqual(expected('lookup_domain', name));
    expect(data.name).toBe(name);
    expect(data.lead.type).toBe('company');
    expect(Array.isArray(data.lead.addresses)).toBe(false);
    expect(typeof data.lead.addresses?.country_code).toBe('string');
  });

  it('findMx: records in ascending priority', async () => {
    const data = await api.findMx('acme.com');
    expect(data).toEqual(expected('mx', 'acme.com'));
    expect(data.domain).toBe('acme.com');
    expect(data.mx_records.length).toBeGreaterThan(0);
    const priorities = data.mx_records.map((r) => r.priority);
    expect(priorities).toEqual([...priorities].sort((a, b) => a - b));
    expect(data.verified_on).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(typeof data.time_taken).toBe('number');
  });

  it('findMx with a timeout the interface allows', async () => {
    const data = await api.findMx('globex.com', { timeout: RESOLVE_TIMEOUT_MAX_MS });
    expect(data).toEqual(expected('mx', 'globex.com'));
  });

  it('findWhois: the whole record, `steet` spelled so', async () => {
    const data = await api.findWhois('acme.com', { timeout: 5000 });
    expect(data).toEqual(expected('whois', 'acme.com'));
    const record = data.whoisRecord;
    expect(record.domain?.name).toBe('acme.com');
    expect(typeof record.registrant?.steet).toBe('string');
    expect(typeof record.registrant?.admin?.steet).toBe('string');
    expect(typeof record.registrant?.tech?.steet).toBe('string');
    expect(record.registrant).not.toHaveProperty('street');
    expect(record.nameservers).toEqual([]);
  });

  it('getPlans: the slash-form timestamp is kept as sent', async () => {
    const data = await api.getPlans();
    expect(data.current_plan.status).toBe('active');
    expect(data.current_plan.next_credit_allocation).toBe('2026-01-01T00:00:00.000Z');
    expect(data.addons[0]?.next_charge_renewal).toBe('2026/12/01');
  });

  it('getCredits: the `pay-as-you-go` breakdown', async () => {
    const data = await api.getCredits();
    expect(data.total_remaining_credits).toBe(sb.credits);
    const b = data.plan_remaining_credits;
    expect(b['pay-as-you-go'] + b.subscription + b.bonus).toBe(data.total_remaining_credits);
    expect(data.low_credit_balance_min_threshold).toBe(100);
  });

  it('getLimits: "N RPM" strings the limits parser reads', async () => {
    const data = await api.getLimits();
    expect(data.email_verify.api_rate_limit.total).toBe('600 RPM');
    const facts = parseServiceLimits(data);
    expect(facts.rpm).toBe(600);
    expect(facts.bulkConcurrency).toBe(5);
    expect(facts.resetAt).toBeInstanceOf(Date);
  });

  it('call(): data, HTTP status and the x-ratelimit headers', async () => {
    const response = await api.call('credits', {});
    expect(response.status).toBe(200);
    expect(response.data.total_remaining_credits).toBe(sb.credits);
    expect(response.rate?.limit).toBe(600);
    expect(response.rate?.remaining).toBeLessThan(600);
    expect(response.rate?.resetAt?.getTime()).toBeGreaterThan(Date.now() - 1000);
  });

  it('an empty lead is "not found": no error, nothing charged', async () => {
    const before = sb.credits;
    const byEmail = await api.lookupEmail('nobody-notfound@acme.com');
    expect(byEmail).toEqual({ email_address: 'nobody-notfound@acme.com', lead: {} });
    expect(isLeadFound(byEmail)).toBe(false);
    expect(isLeadFound(await api.lookupUrl('https://network.example/in/notfound-1'))).toBe(false);
    expect(isLeadFound(await api.lookupDomain('notfound.example'))).toBe(false);
    const whois = await api.findWhois('notfound.example');
    expect(whois.whoisRecord).toEqual({});
    expect(sb.credits).toBe(before);
  });
});

describe('what goes on the wire, and what comes back (tiny server)', () => {
  let tiny: Tiny;
  let api: LeadClient;
  beforeAll(async () => {
    tiny = await tinyServer();
  });
  beforeEach(() => {
    api = client(tiny.baseUrl);
  });
  afterAll(() => tiny.close());

  it('sends the bearer token, the query names of part 4 and JSON bodies without an unasked timeout', async () => {
    tiny.seen = [];
    tiny.handle = (req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path.endsWith('/mx')) json(res, 200, { status: 'success', data: { domain: 'a.com', mx_records: [] } });
      else if (path.endsWith('/whois')) json(res, 200, { status: 'success', data: { domain: 'a.com', whoisRecord: {} } });
      else json(res, 200, { status: 'success', data: { lead: {} } });
    };
    await api.lookupEmail('a@b.com');
    await api.lookupUrl('https://network.example/in/a?b=c&d');
    await api.lookupDomain('acme.com');
    await api.findMx('a.com');
    await api.findWhois('a.com');
    await api.findMx('a.com', { timeout: 5000 });
    const [email, url, domain, mx, whois, mxTimeout] = tiny.seen;
    for (const s of tiny.seen) expect(s.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(email).toMatchObject({ method: 'GET', url: '/v2/reverse_lookup/email?email_address=a%40b.com' });
    expect(new URL(url!.url, 'http://x').searchParams.get('url')).toBe('https://network.example/in/a?b=c&d');
    expect(url!.method).toBe('GET');
    expect(domain).toMatchObject({ method: 'GET', url: '/v2/reverse_lookup/domain?name=acme.com' });
    expect(mx).toMatchObject({ method: 'POST', url: '/v2/domain/resolve/mx' });
    expect(mx!.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(mx!.body)).toEqual({ domain: 'a.com' });
    expect(whois).toMatchObject({ method: 'POST', url: '/v2/domain/resolve/whois' });
    expect(JSON.parse(whois!.body)).toEqual({ domain: 'a.com' });
    expect(JSON.parse(mxTimeout!.body)).toEqual({ domain: 'a.com', timeout: 5000 });
  });

  it("says who it is (lead-enrich, or the caller's own name), asks for JSON in the encodings it decodes, and keeps its connection for the next request", async () => {
    const ports: number[] = [];
    tiny.seen = [];
    tiny.handle = (req, res) => {
      ports.push(req.socket.remotePort!);
      json(res, 200, { status: 'success', data: { lead: {} } });
    };
    await api.lookupEmail('a@b.com');
    await api.lookupEmail('c@b.com');
    const named = client(tiny.baseUrl, { userAgent: 'acme-crm-sync/2.1' });
    await named.lookupEmail('a@b.com');
    expect(tiny.seen.map((s) => s.headers['user-agent'])).toEqual(['lead-enrich', 'lead-enrich', 'acme-crm-sync/2.1']);
    for (const s of tiny.seen)
      expect({ accept: s.headers.accept, encodings: s.headers['accept-encoding'] }).toEqual({ accept: 'application/json', encodings: ACCEPT_ENCODING });
    // One socket for the first client's two requests: the second came on the connection the first left open.
    expect(ports[1]).toBe(ports[0]);
  });

  it('never sends a request that was not on the wire yet when the transport closed', async () => {
    tiny.seen = [];
    tiny.handle = (_req, res) => json(res, 200, { status: 'success', data: { lead: {} } });
    const transport = new Transport({ baseUrl: tiny.baseUrl, token: TOKEN });
    // got puts the request on the wire a few ticks after it is asked for: close() comes first,
    // as when enrichRows' caller breaks out while a granted lookup is on its way out.
    const pending = transport.request({ method: 'GET', path: '/reverse_lookup/email', query: { email_address: 'late@b.com' } });
    transport.close();
    await expect(pending).rejects.toBeInstanceOf(ClientClosedError);
    await expect(transport.request({ method: 'GET', path: '/account/credits' })).rejects.toBeInstanceOf(ClientClosedError);
    await expect(transport.request({ method: 'GET', path: '/account/credits' })).rejects.toThrow(
      /^The LeadClient was closed before this call was sent; make a new client to go on$/,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(tiny.seen).toEqual([]);
  });

  it('close() ends the connection kept alive: nothing holds the process open after a run', async () => {
    let socket: Socket | undefined;
    tiny.handle = (req, res) => {
      socket = req.socket;
      json(res, 200, { status: 'success', data: { lead: {} } });
    };
    const transport = new Transport({ baseUrl: tiny.baseUrl, token: TOKEN });
    await transport.request({ method: 'GET', path: '/account/credits' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(socket?.destroyed).toBe(false);
    const closed = closing(socket!);
    transport.close();
    await expect(closed).resolves.toBe('closed');
  });

  it('over https too: the closed transport opens no connection', async () => {
    let connections = 0;
    const tcp = net.createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    try {
      const transport = new Transport({ baseUrl: `https://127.0.0.1:${(tcp.address() as AddressInfo).port}/v2`, token: TOKEN });
      transport.close();
      await expect(transport.request({ method: 'GET', path: '/account/credits' })).rejects.toBeInstanceOf(ClientClosedError);
      expect(connections).toBe(0);
    } finally {
      tcp.close();
    }
  });

  it('over https, close() ends a connection still in its handshake: nothing holds the process open', async () => {
    // A server that takes the connection and never answers the TLS handshake: the request stays on
    // it. It reads what comes (a paused socket would never see the client's end).
    const held: Socket[] = [];
    const tcp = net.createServer((socket) => {
      held.push(socket);
      socket.resume();
    });
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    try {
      const transport = new Transport({ baseUrl: `https://127.0.0.1:${(tcp.address() as AddressInfo).port}/v2`, token: TOKEN });
      const pending = transport.request({ method: 'GET', path: '/account/credits' });
      pending.catch(() => undefined);
      while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      const closed = closing(held[0]!);
      transport.close();
      await expect(closed).resolves.toBe('closed');
      await expect(pending).rejects.toThrow();
    } finally {
      for (const socket of held) socket.destroy();
      tcp.close();
    }
  });

  it('keeps unknown fields at every level and timestamps exactly as sent', async () => {
    const bodies: Record<string, unknown> = {
      '/v2/reverse_lookup/email': {
        status: 'success',
        meta: 'envelope extras are not data',
        data: {
          email_address: 'a@b.com',
          confidence: 0.9,
          lead: {
            name: 'Ann',
            contructed_title: 'CEO at B',
            seniority: 'c-level',
            addresses: [{ city: 'Lyon', geo: { lat: 45.76, lon: 4.83 } }],
          },
        },
      },
      '/v2/account/myplans': {
        status: 'success',
        data: {
          current_plan: {
            name: 'Pro',
            status: 'active',
            type: 'subscription',
            charge: '$1 / month',
            next_credit_allocation: '2026/12/01 00:00:00',
            next_charge_renewal: '2026/12/01',
            seats: 3,
          },
          addons: [{ name: 'X', status: 'active', type: 'addon', charge: '$0', next_charge_renewal: '01/12/2026', promo: true }],
          trial: false,
        },
      },
      '/v2/account/credits': {
        status: 'success',
        data: {
          total_remaining_credits: 10,
          plan_remaining_credits: { 'pay-as-you-go': 1, subscription: 2, bonus: 7, promo: 0 },
          low_credit_balance_min_threshold: 5,
          currency: 'credits',
        },
      },
      '/v2/account/limits': {
        status: 'success',
        data: {
          email_verify: {
            api_rate_limit: { total: '1,200 RPM', remaining: '7 RPM', next_limit_reset: '2026/11/22 10:00:00', burst: '5' },
            bulk_verify_concurrency_limit: { total: '5 parallel bulk jobs', remaining: '4 parallel bulk jobs' },
            daily: '10000',
          },
          email_finder: { api_rate_limit: { total: '10 RPM' } },
        },
      },
    };
    tiny.handle = (req, res) => json(res, 200, bodies[new URL(req.url ?? '/', 'http://x').pathname] ?? { status: 'failed' });

    const email = await api.lookupEmail('a@b.com');
    expect(email).toEqual((bodies['/v2/reverse_lookup/email'] as { data: unknown }).data);
    expect(email.lead.seniority).toBe('c-level');
    expect(email.lead.addresses?.[0]?.geo).toEqual({ lat: 45.76, lon: 4.83 });

    const plans = await api.getPlans();
    expect(plans).toEqual((bodies['/v2/account/myplans'] as { data: unknown }).data);
    expect(plans.current_plan.next_credit_allocation).toBe('2026/12/01 00:00:00');
    expect(plans.current_plan.next_charge_renewal).toBe('2026/12/01');
    expect(plans.addons[0]?.next_charge_renewal).toBe('01/12/2026');

    const credits = await api.getCredits();
    expect(credits.plan_remaining_credits.promo).toBe(0);
    expect(credits.currency).toBe('credits');

    const limits = await api.getLimits();
    expect(limits).toEqual((bodies['/v2/account/limits'] as { data: unknown }).data);
    expect(limits.email_verify.api_rate_limit.next_limit_reset).toBe('2026/11/22 10:00:00');
    expect(parseServiceLimits(limits)).toMatchObject({ rpm: 1200, remaining: 7, bulkConcurrency: 5 });
    expect(parseServiceLimits(limits).resetAt?.toISOString()).toBe('2026-11-22T10:00:00.000Z');
  });
});

// ---------------------------------------------------------------------------------------------
// Every error class through the real HTTP path

describe('errors from the sandbox', () => {
  let sb: Sandbox;
  let api: LeadClient;
  beforeAll(async () => {
    sb = await sandbox();
  });
  beforeEach(() => {
    api = client(sb.baseUrl, { timeoutMs: 150 });
  });

  it('400 with reasons: BadRequestError', async () => {
    const e = await failure(api.lookupEmail('reject-me@acme.com'), BadRequestError, 'bad_request');
    expect(e.status).toBe(400);
    expect(e.apiCode).toBeUndefined();
    expect(e.reasons).toEqual([
      { field: ['email_address'], location: 'query', messages: ['"email_address" contains an invalid value'], types: ['any.invalid'] },
    ]);
    expect(e.message).toContain('"email_address" contains an invalid value');
    const domain = await failure(api.lookupDomain('no-dot'), BadRequestError, 'bad_request');
    expect(domain.reasons[0]?.types).toEqual(['string.domain']);
    const mx = await failure(api.findMx('reject.example'), BadRequestError, 'bad_request');
    expect(mx.reasons[0]?.location).toBe('body');
  });

  it('402 at zero balance: PaymentRequiredError', async () => {
    const balance = sb.credits;
    sb.setCredits(0);
    try {
      const e = await failure(api.lookupEmail(foundKey('lookup_email', (i) => `pay${i}@acme.com`)), PaymentRequiredError, 'payment_required');
      expect(e.status).toBe(402);
      expect(e.apiCode).toBe(1002);
      expect(e.message).toContain('exhausted your credits');
    } finally {
      sb.setCredits(balance);
    }
  });

  it('500 with an error body: ServerError', async () => {
    sb.setFaults({ error500: 1 });
    try {
      const e = await failure(api.getCredits(), ServerError, 'server_error');
      expect(e.status).toBe(500);
      expect(e.message).toContain('500');
    } finally {
      sb.setFaults({});
    }
  });

  it('503 with no body: ServerError', async () => {
    sb.setFaults({ error503: 1 });
    try {
      const e = await failure(api.lookupDomain('acme.com'), ServerError, 'server_error');
      expect(e.status).toBe(503);
      expect(e.message).toMatch(/503.*no body/);
    } finally {
      sb.setFaults({});
    }
  });

  it('"status":"failed" at HTTP 200 with an unknown code: ApiFailedError', async () => {
    sb.setFaults({ failed200: 1 });
    try {
      const e = await failure(api.lookupEmail('a@acme.com'), ApiFailedError, 'api_failed');
      expect(e.status).toBe(200);
      expect(e.apiCode).toBe(1099);
      expect(e.message).toContain('Temporary failure');
    } finally {
      sb.setFaults({});
    }
  });

  it('a server that never answers: TimeoutError after timeoutMs', async () => {
    sb.setFaults({ hang: 1 });
    try {
      const started = Date.now();
      const e = await failure(api.lookupEmail('a@acme.com'), TimeoutError, 'timeout');
      expect(Date.now() - started).toBeLessThan(2000);
      expect(e.status).toBeUndefined();
    } finally {
      sb.setFaults({});
    }
  });

  it('a reset connection: NetworkError', async () => {
    sb.setFaults({ reset: 1 });
    try {
      const e = await failure(api.getPlans(), NetworkError, 'network');
      expect(e.message).toMatch(/ECONNRESET|socket hang up/);
    } finally {
      sb.setFaults({});
    }
  });

  it('a truncated body framed by connection close: BadResponseError', async () => {
    sb.setFaults({ truncated: 1 });
    try {
      const e = await failure(api.lookupEmail('a@acme.com'), BadResponseError, 'bad_response');
      expect(e.message).toMatch(/not a JSON object|cut short/);
    } finally {
      sb.setFaults({});
    }
  });

  it('the client still works after every fault', async () => {
    expect(isLeadFound(await api.lookupEmail(foundKey('lookup_email', (i) => `after${i}@acme.com`)))).toBe(true);
  });
});

describe('401 from the sandbox', () => {
  it('a token the server does not know: UnauthorizedError, code 1000', async () => {
    const sb = await sandbox({ token: 'the-right-token' });
    const api = client(sb.baseUrl); // sends TOKEN
    const e = await failure(api.lookupEmail('a@acme.com'), UnauthorizedError, 'unauthorized');
    expect(e.status).toBe(401);
    expect(e.apiCode).toBe(1000);
    // A program's words: it passed the option `token` (the CLI names LEAD_API_TOKEN: test/e2e).
    expect(e.message).toMatch(/give a valid token \(the token option\)$/);
    // Authentication comes before the path (behaviour notes): the account operations too.
    await failure(api.getLimits(), UnauthorizedError, 'unauthorized');
  });

  it('a revoked token: UnauthorizedError from then on', async () => {
    const sb = await sandbox();
    const api = client(sb.baseUrl);
    await api.getCredits();
    sb.revokeToken();
    const e = await failure(api.getCredits(), UnauthorizedError, 'unauthorized');
    expect(e.apiCode).toBe(1000);
    await failure(api.findWhois('acme.com'), UnauthorizedError, 'unauthorized');
  });
});

describe('429: RateLimitedError.retryAt from each kind of hint (sandbox)', () => {
  /** One request allowed per minute; the second is refused with the given style. */
  async function limited(style: NonNullable<SandboxOptions['rateLimitStyle']>): Promise<{ e: RateLimitedError; windowEnd: number }> {
    const sb = await sandbox({ rpm: 1, windowMs: 60_000, rateLimitStyle: style });
    const api = client(sb.baseUrl);
    const first = await api.call('credits', {});
    const windowEnd = first.rate?.resetAt?.getTime() ?? NaN;
    const e = await failure(api.getCredits(), RateLimitedError, 'rate_limited');
    expect(e.status).toBe(429);
    expect(e.retryAt).toBeInstanceOf(Date);
    // The window ends at most 60 s after the server started; every hint points there (±1 s).
    expect(e.retryAt!.getTime()).toBeGreaterThan(Date.now() + 55_000);
    expect(e.retryAt!.getTime()).toBeLessThanOrEqual(Date.now() + 61_000);
    expect(Math.abs(e.retryAt!.getTime() - windowEnd)).toBeLessThanOrEqual(1500);
    return { e, windowEnd };
  }

  it('Retry-After in seconds', async () => {
    const { e } = await limited({ retryAfter: 'seconds', rateLimitHeaders: false });
    expect(e.apiCode).toBe(1030);
  });

  it('Retry-After as an HTTP date', async () => {
    const { e } = await limited({ retryAfter: 'http-date', rateLimitHeaders: false });
    expect(e.retryAt!.getTime() % 1000).toBe(0);
  });

  it('the code-1030 "Retry after <timestamp> UTC" message alone', async () => {
    const { e } = await limited({ retryAfter: 'none', rateLimitHeaders: false, message: 'code1030' });
    expect(e.apiCode).toBe(1030);
    expect(e.message).toMatch(/Retry after \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
    expect(e.retryAt!.getTime() % 1000).toBe(0);
  });

  it('the legacy message (no code, a long date string) alone', async () => {
    const { e } = await limited({ retryAfter: 'none', rateLimitHeaders: false, message: 'legacy' });
    expect(e.apiCode).toBeUndefined();
    expect(e.message).toMatch(/Retry after \w{3} \w{3} \d{2} \d{4}/);
  });
});

describe('odd answers (tiny server)', () => {
  let tiny: Tiny;
  let api: LeadClient;
  beforeAll(async () => {
    tiny = await tinyServer();
  });
  beforeEach(() => {
    api = client(tiny.baseUrl, { timeoutMs: 300, maxBodyBytes: 4096 });
  });
  afterAll(() => tiny.close());

  const tooMany = { status: 'failed', error: { code: 1030, message: 'Too many requests' } };

  it('429 with x-ratelimit-reset only', async () => {
    tiny.handle = (_req, res) => json(res, 429, tooMany, { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '42' });
    const before = Date.now();
    const e = await failure(api.getCredits(), RateLimitedError, 'rate_limited');
    expect(e.retryAt!.getTime()).toBeGreaterThanOrEqual(before + 42_000);
    expect(e.retryAt!.getTime()).toBeLessThanOrEqual(Date.now() + 42_000);
  });

  it('429 with Retry-After seconds wins over the message and x-ratelimit-reset', async () => {
    tiny.handle = (_req, res) =>
      json(
        res,
        429,
        { status: 'failed', error: { code: 1030, message: 'Too many requests, Retry after 2031-01-01 00:00:00 UTC' } },
        {
          'retry-after': '7',
          'x-ratelimit-reset': '100',
        },
      );
    const before = Date.now();
    const e = await failure(api.lookupEmail('a@b.com'), RateLimitedError, 'rate_limited');
    expect(e.retryAt!.getTime()).toBeGreaterThanOrEqual(before + 7000);
    expect(e.retryAt!.getTime()).toBeLessThanOrEqual(Date.now() + 7000);
  });

  it('a server that echoes the token back in its error does not make us print it', async () => {
    tiny.handle = (req, res) =>
      json(res, 400, {
        status: 'failed',
        error: { message: `bad header ${req.headers.authorization}`, reasons: [{ messages: [`got ${req.headers.authorization}`] }] },
      });
    const e = await failure(api.getCredits(), BadRequestError, 'bad_request');
    expect(e.message).toContain('got Bearer ***');
    expect(JSON.stringify(e.reasons)).not.toContain(TOKEN);
  });

  it('429 with a Retry-After HTTP date', async () => {
    const at = inHalfAnHour();
    tiny.handle = (_req, res) => json(res, 429, tooMany, { 'retry-after': at.toUTCString() });
    const e = await failure(api.getCredits(), RateLimitedError, 'rate_limited');
    expect(e.retryAt?.toISOString()).toBe(at.toISOString());
  });

  it('429 whose message timestamp wins over x-ratelimit-reset', async () => {
    const at = inHalfAnHour();
    tiny.handle = (_req, res) =>
      json(
        res,
        429,
        { status: 'failed', error: { code: 1030, message: `Too many requests, Retry after ${utcText(at)}` } },
        {
          'x-ratelimit-reset': '100',
        },
      );
    const e = await failure(api.getCredits(), RateLimitedError, 'rate_limited');
    expect(e.retryAt?.toISOString()).toBe(at.toISOString());
  });

  it('429 with no usable hint: retryAt undefined', async () => {
    tiny.handle = (_req, res) => json(res, 429, '');
    const e = await failure(api.getCredits(), RateLimitedError, 'rate_limited');
    expect(e.retryAt).toBeUndefined();
  });

  it('"failed" at HTTP 200 with code 1000 / 1002 / 1030 maps to its class', async () => {
    tiny.handle = (_req, res) => json(res, 200, { status: 'failed', error: { code: 1000, message: 'Invalid API Token, please generate new token' } });
    const a = await failure(api.lookupEmail('a@b.com'), UnauthorizedError, 'unauthorized');
    expect(a).toMatchObject({ status: 200, apiCode: 1000 });

    tiny.handle = (_req, res) => json(res, 200, { status: 'failed', error: { code: 1002, message: 'You have exhausted your credits' } });
    const b = await failure(api.lookupEmail('a@b.com'), PaymentRequiredError, 'payment_required');
    expect(b).toMatchObject({ status: 200, apiCode: 1002 });
    for (const code of [1028, 1031]) {
      tiny.handle = (_req, res) => json(res, 402, { status: 'failed', error: { code, message: 'no credits' } });
      await failure(api.lookupEmail('a@b.com'), PaymentRequiredError, 'payment_required');
    }

    const at = inHalfAnHour();
    tiny.handle = (_req, res) => json(res, 200, { status: 'failed', error: { code: 1030, message: `Too many requests, Retry after ${utcText(at)}` } });
    const c = await failure(api.lookupEmail('a@b.com'), RateLimitedError, 'rate_limited');
    expect(c).toMatchObject({ status: 200, apiCode: 1030 });
    expect(c.retryAt?.toISOString()).toBe(at.toISOString());
  });

  it('"failed" at HTTP 200 with no error object: ApiFailedError', async () => {
    tiny.handle = (_req, res) => json(res, 200, { status: 'failed' });
    await failure(api.getCredits(), ApiFailedError, 'api_failed');
  });

  it('524 "Timeout Occurred": ServerError', async () => {
    tiny.handle = (_req, res) => json(res, 524, { status: 'failed', error: { message: 'Timeout Occurred', additional_info: { ray: 'abc123' } } });
    const e = await failure(api.findMx('a.com'), ServerError, 'server_error');
    expect(e.status).toBe(524);
    expect(e.message).toContain('Timeout Occurred');
  });

  it('502 with an HTML page: ServerError', async () => {
    tiny.handle = (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html><body>Bad gateway</body></html>');
    };
    const e = await failure(api.getCredits(), ServerError, 'server_error');
    expect(e.message).toContain('non-JSON');
  });

  it('a 404 is permanent and hints at the base URL', async () => {
    tiny.handle = (_req, res) => json(res, 404, { status: 'failed', error: { code: 404, message: 'Not found' } });
    const e = await failure(api.getCredits(), BadRequestError, 'bad_request');
    expect(e.message).toContain('/v2');
  });

  it('a redirect is not followed: a moved API is a base URL to fix, and the token goes nowhere else', async () => {
    tiny.seen = [];
    tiny.handle = (req, res) => {
      if (req.url?.startsWith('/v2/moved')) return json(res, 200, { status: 'success', data: { lead: {} } });
      res.writeHead(301, { location: '/v2/moved/reverse_lookup/email?email_address=a%40b.com', 'content-length': 0 });
      res.end();
    };
    const e = await failure(api.lookupEmail('a@b.com'), BadRequestError, 'bad_request');
    expect(e.status).toBe(301);
    expect(tiny.seen.map((s) => s.url)).toEqual(['/v2/reverse_lookup/email?email_address=a%40b.com']);
  });

  it('an HTML error page at HTTP 200: BadResponseError', async () => {
    tiny.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE html><html><head><title>Maintenance</title></head><body>Back soon</body></html>');
    };
    const e = await failure(api.lookupEmail('a@b.com'), BadResponseError, 'bad_response');
    expect(e.status).toBe(200);
  });

  it('an empty body at HTTP 200: BadResponseError', async () => {
    tiny.handle = (_req, res) => json(res, 200, '');
    const e = await failure(api.getCredits(), BadResponseError, 'bad_response');
    expect(e.message).toContain('empty body');
  });

  it('JSON without `data`: BadResponseError', async () => {
    tiny.handle = (_req, res) => json(res, 200, { status: 'success' });
    const e = await failure(api.getCredits(), BadResponseError, 'bad_response');
    expect(e.message).toContain('no data object');
    tiny.handle = (_req, res) => json(res, 200, [{ status: 'success', data: {} }]);
    await failure(api.getCredits(), BadResponseError, 'bad_response');
  });

  it('JSON of the wrong shape: BadResponseError', async () => {
    const wrong: Array<[() => Promise<unknown>, unknown]> = [
      [() => api.lookupEmail('a@b.com'), { email_address: 'a@b.com', lead: 'nobody' }],
      // `lead: null`, `{}` or absent are "not found" and an array of companies is an answer (service-answers.test.ts).
      [() => api.lookupUrl('https://n.example/in/a'), { lead: 42 }],
      [() => api.lookupDomain('a.com'), { name: 'a.com', lead: ['acme'] }],
      [() => api.findMx('a.com'), { domain: 'a.com', mx_records: 'mx1.a.com' }],
      [() => api.findWhois('a.com'), { domain: 'a.com' }],
      [() => api.getCredits(), { total_remaining_credits: '12' }],
      [() => api.getLimits(), { email_verify: 'none' }],
      [() => api.getPlans(), { addons: [] }],
    ];
    for (const [call, data] of wrong) {
      tiny.handle = (_req, res) => json(res, 200, { status: 'success', data });
      const e = await failure(call(), BadResponseError, 'bad_response');
      expect(e.message).toContain('wrong shape');
    }
  });

  it('a body larger than maxBodyBytes, with or without Content-Length: BadResponseError', async () => {
    const big = JSON.stringify({ status: 'success', data: { lead: {}, padding: 'x'.repeat(20_000) } });
    tiny.handle = (_req, res) => json(res, 200, big);
    const a = await failure(api.lookupUrl('https://n.example/in/a'), BadResponseError, 'bad_response');
    expect(a.message).toContain('exceeded 4096 bytes');

    tiny.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }); // chunked
      let sent = 0;
      const timer = setInterval(() => {
        if (res.destroyed || sent > 1_000_000) {
          clearInterval(timer);
          if (!res.destroyed) res.end();
          return;
        }
        res.write('x'.repeat(1024));
        sent += 1024;
      }, 1);
      res.on('close', () => clearInterval(timer));
    };
    const b = await failure(api.lookupUrl('https://n.example/in/a'), BadResponseError, 'bad_response');
    expect(b.message).toContain('exceeded 4096 bytes');
  });

  it('a body that trickles forever: TimeoutError (the timeout covers the body)', async () => {
    tiny.handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":"success","data":{"lead":{"name":"');
      const timer = setInterval(() => {
        if (res.destroyed) clearInterval(timer);
        else res.write('a');
      }, 20);
      res.on('close', () => clearInterval(timer));
    };
    const started = Date.now();
    await failure(api.lookupEmail('a@b.com'), TimeoutError, 'timeout');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('the connection is refused: NetworkError', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const e = await failure(client(`http://127.0.0.1:${port}/v2`).getCredits(), NetworkError, 'network');
    expect(e.message).toContain('ECONNREFUSED');
  });
});

// ---------------------------------------------------------------------------------------------

describe('validateBaseUrl', () => {
  it.each([
    ['https://api.example.com/v2', 'https://api.example.com/v2'],
    ['https://api.example.com/v2/', 'https://api.example.com/v2'],
    ['https://API.Example.com:8443/lead/v2', 'https://api.example.com:8443/lead/v2'],
    ['http://127.0.0.1:8080/v2', 'http://127.0.0.1:8080/v2'],
    ['http://127.45.6.7/v2/', 'http://127.45.6.7/v2'],
    ['http://localhost:3000/v2', 'http://localhost:3000/v2'],
    ['http://LOCALHOST/v2', 'http://localhost/v2'],
    ['http://[::1]:3000/v2', 'http://[::1]:3000/v2'],
  ])('accepts %s', (input, output) => {
    expect(validateBaseUrl(input)).toBe(output);
  });

  it.each([
    ['https://api.example.com', /must end with \/v2/],
    ['https://api.example.com/v1', /must end with \/v2/],
    ['https://api.example.com/v2/reverse_lookup', /must end with \/v2/],
    ['https://api.example.com/v22', /must end with \/v2/],
    ['https://api.example.com/v2?x=1', /query or fragment/],
    ['api.example.com/v2', /absolute URL/],
    ['ftp://api.example.com/v2', /must use https/],
    ['http://api.example.com/v2', /plain http to api\.example\.com.*https:\/\/.*loopback/],
    ['http://10.0.0.5/v2', /plain http/],
    ['http://127.0.0.1.evil.example/v2', /plain http/],
    ['http://localhost.evil.example/v2', /plain http/],
    ['https://user:hunter2@api.example.com/v2', /must not contain credentials/],
    [`https://${TOKEN}@api.example.com/v2`, /must not contain credentials/],
    [`http://x:${TOKEN}@127.0.0.1/v2`, /must not contain credentials/],
    // Unparseable: the input is echoed, but never its user-info part.
    [`https://${TOKEN}@exa mple.com/v2`, /absolute URL.*'https:\/\/\*\*\*@exa mple\.com\/v2'/],
    ['https://user:hunter2@bad host/v2', /absolute URL.*\*\*\*@bad host/],
  ])('refuses %s', (input, message) => {
    const e = failureSync(() => validateBaseUrl(input), ConfigError, 'config');
    expect(e.message).toMatch(message);
    expect(e.message).not.toContain('hunter2');
  });

  it('is applied by the client constructor, which also wants a token', () => {
    failureSync(() => new LeadClient({ baseUrl: 'http://api.example.com/v2', token: TOKEN }), ConfigError, 'config');
    failureSync(() => new LeadClient({ baseUrl: 'https://api.example.com/v2', token: '' }), ConfigError, 'config');
    failureSync(() => new LeadClient({ baseUrl: 'https://api.example.com/v2', token: `${TOKEN} x` }), ConfigError, 'config');
    // Characters Node refuses in a header value: one configuration error up front, not a
    // transient NetworkError (ERR_INVALID_CHAR) on every request.
    for (const token of [`${TOKEN}\u0001`, `${TOKEN}\u20ac`, `${TOKEN}\u0000`, `${TOKEN}\u007f`]) {
      const e = failureSync(() => new LeadClient({ baseUrl: 'https://api.example.com/v2', token }), ConfigError, 'config');
      expect(e.message).toMatch(/cannot be sent in an HTTP header/);
    }
    // Latin-1 is what Node sends; the server decides whether it is a valid token.
    expect(() => client('https://api.example.com/v2', { token: `${TOKEN}\u00e9` }).close()).not.toThrow();
    const c = client('https://api.example.com/v2/');
    expect(c.baseUrl).toBe('https://api.example.com/v2');
  });
});

describe('MX / Whois timeout validation', () => {
  it.each([200_000, 110_001, 0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '5000'])('refuses %s before any request', async (timeout) => {
    const sb = await sandbox();
    const api = client(sb.baseUrl);
    const mx = await failure(api.findMx('acme.com', { timeout: timeout as number }), InvalidInputError, 'invalid_input');
    expect(mx.message).toMatch(/^Invalid timeout: /);
    expect(mx.message).toContain(String(timeout));
    await failure(api.findWhois('acme.com', { timeout: timeout as number }), InvalidInputError, 'invalid_input');
    await failure(api.call('mx', { domain: 'acme.com', timeout: timeout as number }), InvalidInputError, 'invalid_input');
    expect(sb.stats.requests).toBe(0);
  });

  it('validateResolveTimeout accepts 1..110000 and undefined', () => {
    expect(validateResolveTimeout(undefined)).toBeUndefined();
    expect(validateResolveTimeout(1)).toBe(1);
    expect(validateResolveTimeout(90_000)).toBe(90_000);
    expect(validateResolveTimeout(110_000)).toBe(110_000);
  });
});

// ---------------------------------------------------------------------------------------------
// Pure parsers

describe('parseLimitCount', () => {
  it.each([
    ['600 RPM', 600],
    ['1,200 RPM', 1200],
    ['  45 RPM', 45],
    ['0 RPM', 0],
    ['5 parallel bulk jobs', 5],
    ['10_000 RPM', 10000],
    [600, 600],
    [12.7, 12],
  ])('%j -> %d', (text, count) => {
    expect(parseLimitCount(text, 'api_rate_limit.total')).toBe(count);
  });

  it.each(['unlimited', '', 'RPM 600', '-5 RPM', null, undefined, {}, -1, Number.NaN])('%j -> BadResponseError', (text) => {
    const e = failureSync(() => parseLimitCount(text, 'api_rate_limit.total'), BadResponseError, 'bad_response');
    expect(e.message).toContain('api_rate_limit.total');
  });

  it('parseServiceLimits: remaining never above the total; an unreadable bulk limit is ignored', () => {
    const limits = {
      email_verify: {
        api_rate_limit: { total: '100 RPM', remaining: '250 RPM', next_limit_reset: 'soon' },
        bulk_verify_concurrency_limit: { total: 'many', remaining: 'many' },
      },
    } as ServiceLimits;
    expect(parseServiceLimits(limits)).toEqual({ rpm: 100, remaining: 100, resetAt: undefined, bulkConcurrency: undefined });
    failureSync(() => parseServiceLimits({} as ServiceLimits), BadResponseError, 'bad_response');
  });
});

describe('parseTimestamp', () => {
  it.each([
    ['2026-11-22T10:00:00.123Z', '2026-11-22T10:00:00.123Z'],
    ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T10:00:00', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T12:00:00+02:00', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22 10:00:00 UTC', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22 10:00:00', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22 10:00 GMT', '2026-11-22T10:00:00.000Z'],
    ['2026/11/22 10:00:00', '2026-11-22T10:00:00.000Z'],
    ['2026/12/01', '2026-12-01T00:00:00.000Z'],
    ['2026-12-01', '2026-12-01T00:00:00.000Z'],
    ['Sun, 22 Nov 2026 10:00:00 GMT', '2026-11-22T10:00:00.000Z'],
    ['Sun Nov 22 2026 11:00:00 GMT+0100 (Central European Standard Time)', '2026-11-22T10:00:00.000Z'],
    [' 2026-11-22T10:00:00Z ', '2026-11-22T10:00:00.000Z'],
  ])('%j -> %s, whatever the host time zone', (text, iso) => {
    const tz = process.env.TZ;
    try {
      for (const zone of ['UTC', 'America/New_York', 'Asia/Tokyo']) {
        process.env.TZ = zone;
        expect(parseTimestamp(text)?.toISOString(), zone).toBe(iso);
      }
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
  });

  it.each(['', '   ', 'soon', 'not a date', '2026-13-45T99:00:00Z', null, undefined, 1_700_000_000])('%j -> undefined', (text) => {
    expect(parseTimestamp(text)).toBeUndefined();
  });
});

describe('retryAtFrom', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 0);
  const at = (iso: string) => new Date(iso);
  it.each<[string, Record<string, string | string[] | undefined>, string | undefined, Date | undefined]>([
    ['Retry-After seconds', { 'retry-after': '30' }, undefined, new Date(now + 30_000)],
    ['Retry-After fractional seconds', { 'retry-after': '1.5' }, undefined, new Date(now + 1500)],
    ['Retry-After HTTP date', { 'retry-after': 'Thu, 01 Jan 2026 12:05:00 GMT' }, undefined, at('2026-01-01T12:05:00Z')],
    ['Retry-After as an array', { 'retry-after': ['10', '99'] }, undefined, new Date(now + 10_000)],
    ['code-1030 message', {}, 'Too many requests, Retry after 2026-01-01 12:01:00 UTC', at('2026-01-01T12:01:00Z')],
    ['message with a trailing dot', {}, 'Retry after 2026-01-01 12:01:00 UTC.', at('2026-01-01T12:01:00Z')],
    [
      'legacy long-date message',
      {},
      'Too many requests, Retry after Thu Jan 01 2026 13:02:00 GMT+0100 (Central European Standard Time)',
      at('2026-01-01T12:02:00Z'),
    ],
    ['x-ratelimit-reset seconds', { 'x-ratelimit-reset': '45' }, undefined, new Date(now + 45_000)],
    ['x-ratelimit-reset as epoch seconds', { 'x-ratelimit-reset': String(now / 1000 + 90) }, undefined, new Date(now + 90_000)],
    [
      'Retry-After beats the message and x-ratelimit-reset',
      { 'retry-after': '5', 'x-ratelimit-reset': '50' },
      'Retry after 2026-01-01 13:00:00 UTC',
      new Date(now + 5000),
    ],
    ['the message beats x-ratelimit-reset', { 'x-ratelimit-reset': '50' }, 'Retry after 2026-01-01 13:00:00 UTC', at('2026-01-01T13:00:00Z')],
    ['an unusable Retry-After falls through to the message', { 'retry-after': 'later' }, 'Retry after 2026-01-01 13:00:00 UTC', at('2026-01-01T13:00:00Z')],
    ['an unusable message falls through to x-ratelimit-reset', { 'x-ratelimit-reset': '50' }, 'Retry after a while', new Date(now + 50_000)],
    ['nothing usable', { 'x-ratelimit-reset': 'soon' }, 'Too many requests', undefined],
    ['nothing at all', {}, undefined, undefined],
  ])('%s', (_name, headers, message, result) => {
    expect(retryAtFrom(headers, message, now)).toEqual(result);
  });
});

describe('rateHeadersFrom', () => {
  const now = Date.UTC(2026, 0, 1);
  it.each<[Record<string, string | string[] | undefined>, ReturnType<typeof rateHeadersFrom>]>([
    [{}, undefined],
    [{ 'content-type': 'application/json' }, undefined],
    [
      { 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': '599', 'x-ratelimit-reset': '60' },
      { limit: 600, remaining: 599, resetAt: new Date(now + 60_000) },
    ],
    [{ 'x-ratelimit-remaining': '0' }, { limit: undefined, remaining: 0, resetAt: undefined }],
    [
      { 'x-ratelimit-limit': 'lots', 'x-ratelimit-reset': 'soon' },
      { limit: undefined, remaining: undefined, resetAt: undefined },
    ],
    [{ 'x-ratelimit-reset': String(now / 1000 + 30) }, { limit: undefined, remaining: undefined, resetAt: new Date(now + 30_000) }],
    [{ 'x-ratelimit-limit': ['100', '200'] }, { limit: 100, remaining: undefined, resetAt: undefined }],
  ])('%j', (headers, result) => {
    expect(rateHeadersFrom(headers, now)).toEqual(result);
  });
});

describe('parseResponse (the factory, without HTTP)', () => {
  it('maps a validation body to BadRequestError with its reasons', () => {
    const body = JSON.stringify({
      status: 'failed',
      error: {
        message: 'validation failed',
        reasons: [{ field: ['email'], location: 'body', messages: ['"email" is required'], types: ['any.required'] }],
      },
    });
    const e = failureSync(() => parseResponse(400, {}, body, '/x'), BadRequestError, 'bad_request');
    expect(e.message).toContain('"email" is required');
    expect(e.reasons[0]?.field).toEqual(['email']);
  });

  it('returns the data and the rate headers of a success', () => {
    const r = parseResponse<{ a: number }>(200, { 'x-ratelimit-limit': '10' }, '{"status":"success","data":{"a":1}}', '/x', 0);
    expect(r).toEqual({ data: { a: 1 }, status: 200, rate: { limit: 10, remaining: undefined, resetAt: undefined } });
  });
});

// ---------------------------------------------------------------------------------------------

describe('the token never shows', () => {
  it('in any error above: message, String(), JSON, inspect, stack, causes', () => {
    const errors = collected.filter((e): e is LeadEnrichError => e instanceof LeadEnrichError);
    // Every failure kind went through this file.
    const codes = new Set(errors.map((e) => e.code));
    for (const code of [
      'bad_request',
      'unauthorized',
      'payment_required',
      'rate_limited',
      'server_error',
      'api_failed',
      'timeout',
      'network',
      'bad_response',
      'invalid_input',
      'config',
    ]) {
      expect(codes, code).toContain(code);
    }
    expect(errors.length).toBe(collected.length);
    expect(errors.length).toBeGreaterThan(60);

    const texts: string[] = [];
    for (const e of errors) {
      texts.push(e.message, String(e), e.stack ?? '', JSON.stringify(e));
      const { name, code, message, status, apiCode } = e;
      const extra = e as unknown as { reasons?: unknown; retryAt?: unknown };
      texts.push(JSON.stringify({ name, code, message, status, apiCode, reasons: extra.reasons, retryAt: extra.retryAt }));
      texts.push(inspect(e, { depth: 4 }));
      let cause: unknown = e.cause;
      for (let depth = 0; cause !== undefined && depth < 10; depth++) {
        const c = cause as { message?: unknown; stack?: unknown; cause?: unknown };
        texts.push(String(cause), String(c.message), String(c.stack), inspect(cause, { depth: 3 }));
        try {
          texts.push(JSON.stringify(cause) ?? '');
        } catch {
          // circular: inspect above covers it
        }
        cause = c.cause;
      }
    }
    const leaks = texts.filter((t) => t.includes(TOKEN) || t.includes('SECRET-zq81'));
    expect(leaks.map((t) => t.slice(0, 300))).toEqual([]);
  });
});

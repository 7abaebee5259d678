// One request through the transport (src/api/transport.ts) below the answer's meaning, each against
// a real socket on 127.0.0.1: a body cut off mid-way, a body that cannot be decoded as its
// Content-Encoding says or grows past the cap once decoded, one gzipped or exactly as large as the
// cap (taken), a request's own timeout, a 400's reasons as the server shaped them, a base URL
// without a port (the port its scheme implies is the one named), and a proxy that refuses the
// tunnel (its password is in none of the error's messages or stacks). client.test.ts holds the
// answers' meanings, through the client.
import http from 'node:http';
import net from 'node:net';
import { inspect } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BadRequestError, BadResponseError, LeadEnrichError, NetworkError, ProxyError, TimeoutError } from '../../src/api/errors.js';
import { canProxy } from '../../src/api/proxy.js';
import { Transport } from '../../src/api/transport.js';

const TOKEN = 'tok-SECRET-rf52';
const transports: Transport[] = [];
const servers: net.Server[] = [];

function transport(baseUrl: string, options: { maxBodyBytes?: number; proxy?: string } = {}): Transport {
  const t = new Transport({ baseUrl, token: TOKEN, timeoutMs: 5000, ...options });
  transports.push(t);
  return t;
}

async function listening<S extends net.Server>(server: S): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

/** The error a request failed with (the test fails when it did not). */
async function failureOf(promise: Promise<unknown>): Promise<LeadEnrichError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome, 'the request should have failed').toBeInstanceOf(LeadEnrichError);
  return outcome as LeadEnrichError;
}

/** Whether something on this machine answers on 127.0.0.1:port (a developer's own web server). */
function answersOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

afterAll(async () => {
  for (const t of transports) t.close();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('a body that is not had whole', () => {
  let baseUrl: string;
  let answer: (res: http.ServerResponse) => void = (res) => res.end();
  beforeAll(async () => {
    const server = http.createServer((_req, res) => answer(res));
    baseUrl = `http://127.0.0.1:${await listening(server)}/v2`;
  });

  it('cut off mid-way by the server: a bad response that says it was cut short, and why', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"status":"succeeded","da', () => res.socket?.destroy());
    };
    const error = await failureOf(transport(baseUrl).request({ method: 'GET', path: '/account/credits' }));
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.message).toMatch(/^Response from \/account\/credits was cut short \(E[A-Z_]+\)$/);
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('not gzip although it says so: a bad response naming the coding, with the status', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end('{"status":"succeeded"}');
    };
    const error = await failureOf(transport(baseUrl).request({ method: 'GET', path: '/account/credits' }));
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.message).toMatch(/^Response from \/account\/credits could not be decoded: gzip: .+/);
    expect(error.status).toBe(200);
  });

  it('larger than the cap once decoded: a bad response naming the cap, with the status', async () => {
    const big = gzipSync(JSON.stringify({ status: 'succeeded', data: { note: 'x'.repeat(100_000) } }));
    expect(big.length).toBeLessThan(4096);
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(big);
    };
    const error = await failureOf(transport(baseUrl, { maxBodyBytes: 4096 }).request({ method: 'GET', path: '/account/credits' }));
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.message).toBe('Response from /account/credits exceeded 4096 bytes once decoded (gzip); refused');
    expect(error.status).toBe(200);
  });
});

describe('a body had whole', () => {
  let baseUrl: string;
  let answer: (res: http.ServerResponse) => void = (res) => res.end();
  beforeAll(async () => {
    const server = http.createServer((_req, res) => answer(res));
    baseUrl = `http://127.0.0.1:${await listening(server)}/v2`;
  });
  const credits = (padding: number) => JSON.stringify({ status: 'success', data: { credits: 7, note: 'x'.repeat(padding) } });

  it('gzipped: decoded as its Content-Encoding says', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(credits(10)));
    };
    const answered = await transport(baseUrl).request<{ credits: number }>({ method: 'GET', path: '/account/credits' });
    expect(answered.data.credits).toBe(7);
  });

  it('exactly as large as the cap: taken; a byte more: refused, the cause saying why', async () => {
    const exact = credits(4096 - credits(0).length);
    expect(Buffer.byteLength(exact)).toBe(4096);
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(exact);
    };
    const answered = await transport(baseUrl, { maxBodyBytes: 4096 }).request<{ credits: number }>({ method: 'GET', path: '/account/credits' });
    expect(answered.data.credits).toBe(7);
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`${exact} `);
    };
    const error = await failureOf(transport(baseUrl, { maxBodyBytes: 4096 }).request({ method: 'GET', path: '/account/credits' }));
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.message).toBe('Response from /account/credits exceeded 4096 bytes; refused');
    expect((error.cause as Error).message).toBe('response body too large');
  });

  it('far larger, still arriving: cut off at the cap, the cause saying why, and not read on to its end', async () => {
    let sent = 0;
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = 'x'.repeat(16_384);
      const more = (): void => {
        if (sent++ < 64 && !res.destroyed) res.write(chunk, () => setTimeout(more, 5));
        else res.end();
      };
      more();
    };
    const error = await failureOf(transport(baseUrl, { maxBodyBytes: 4096 }).request({ method: 'GET', path: '/account/credits' }));
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.message).toBe('Response from /account/credits exceeded 4096 bytes; refused');
    expect((error.cause as Error).message).toBe('response body too large');
    // The connection was cut as the cap passed: the server stopped long before its 64 chunks.
    expect(sent).toBeLessThan(16);
  });

  it("a request's own timeout wins over the transport's: a timeout naming the path, with its cause", async () => {
    answer = (res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(credits(0));
      }, 1_000);
    };
    const error = await failureOf(transport(baseUrl).request({ method: 'GET', path: '/mx', timeoutMs: 100 }));
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.message).toBe('No complete answer from /mx within the timeout');
    expect((error.cause as Error).name).toBe('TimeoutError');
  });

  it('a 400 whose reasons carry no messages, the token echoed in its message: refused as it is, the token masked', async () => {
    answer = (res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'failed', error: { message: `bad ${TOKEN}`, reasons: [{ field: 'email_address' }, { messages: [`not ${TOKEN}`] }] } }));
    };
    const error = await failureOf(transport(baseUrl).request({ method: 'GET', path: '/reverse_lookup/email' }));
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.message).not.toContain(TOKEN);
    expect((error as BadRequestError).reasons).toEqual([{ field: 'email_address' }, { messages: ['not ***'] }]);
  });
});

describe('a base URL without a port names the port its scheme implies', () => {
  for (const [scheme, port] of [
    ['https', 443],
    ['http', 80],
  ] as const) {
    it(`${scheme}://127.0.0.1/v2: port ${port}`, async (context) => {
      // Skipped, with its reason, on a machine where a server of its own answers on that port.
      if (await answersOn(port)) {
        context.skip(`something on this machine answers on 127.0.0.1:${port}, so the request would not fail to connect`);
      }
      const error = await failureOf(transport(`${scheme}://127.0.0.1/v2`).request({ method: 'GET', path: '/account/credits' }));
      expect(error).toBeInstanceOf(NetworkError);
      expect(error.message).toContain(`Cannot reach 127.0.0.1:${port} (/account/credits): connection refused`);
    });
  }
});

describe("a connection's failure keeps what it was, and nothing of the request", () => {
  it("its cause is a copy of got's error and of its own cause: name, code, message and stack, no options", async () => {
    const closed = http.createServer();
    const port = await listening(closed);
    await new Promise((resolve) => closed.close(resolve));
    const error = await failureOf(transport(`http://127.0.0.1:${port}/v2`).request({ method: 'GET', path: '/account/credits' }));
    expect(error).toBeInstanceOf(NetworkError);
    const cause = error.cause as Error & { code?: string; options?: unknown };
    expect(cause.name).toBe('RequestError');
    expect(cause.code).toBe('ECONNREFUSED');
    expect(cause.message).toContain('ECONNREFUSED');
    // got's own stack, not one made where the copy was.
    expect(cause.stack).toMatch(/^RequestError: /);
    expect(cause.stack).not.toContain('safeCause');
    expect(cause.options).toBeUndefined();
    const inner = cause.cause as Error & { code?: string };
    expect(inner).toBeInstanceOf(Error);
    expect(inner.code).toBe('ECONNREFUSED');
    expect(inner.stack).toContain('ECONNREFUSED');
    expect(inspect(error, { depth: 10 })).not.toContain(TOKEN);
  });
});

// Node's agents tunnel through a proxy from 22.21 and 24.5 on (lead-enrich refuses a proxy before
// that, tested in test/e2e/networks.test.ts): CI's Node 22, 24 and 26 run this.
describe.skipIf(!canProxy())(
  'a proxy that refuses the tunnel',
  { meta: { skipReason: `Node ${process.version} cannot tunnel through a proxy (22.21 / 24.5 and later can)` } },
  () => {
    const connects: string[] = [];
    let proxyPort = 0;
    beforeAll(async () => {
      const proxy = http.createServer((_req, res) => res.writeHead(405).end());
      proxy.on('connect', (req: http.IncomingMessage, socket: net.Socket) => {
        connects.push(req.url ?? '');
        socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="corp"\r\n\r\n');
      });
      proxyPort = await listening(proxy);
    });

    it('the request went to the proxy, and its password, as typed or decoded, is in no message or stack of the error', async () => {
      const typed = 'Pa%40ss-w0rd';
      const t = transport('https://api.lead.test/v2', { proxy: `http://corp-user:${typed}@127.0.0.1:${proxyPort}` });
      const error = await failureOf(t.request({ method: 'GET', path: '/account/credits' }));
      expect(connects).toContain('api.lead.test:443');
      expect(error).toBeInstanceOf(ProxyError);
      expect(error.message).toContain(`http://corp-user@127.0.0.1:${proxyPort}`);
      const texts: string[] = [inspect(error, { depth: 10 })];
      for (let e: unknown = error; e instanceof Error; e = e.cause) texts.push(e.message, e.stack ?? '');
      for (const text of texts) {
        expect(text).not.toContain(typed);
        expect(text).not.toContain('Pa@ss-w0rd');
      }
    });
  },
);

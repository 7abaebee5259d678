// The library's LeadClient (cli-contract.md, "Library"): single calls retry what the CLI retries
// and share one rate limit paced evenly as in `enrich`, with the pipeline's own retry policy and
// rate gate. Against the sandbox on 127.0.0.1; requests counted server-side (sandbox.stats).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LeadClient } from '../../src/lookup/lead-client.js';
import {
  BadRequestError,
  ClientClosedError,
  ConfigError,
  LeadEnrichError,
  LeadError,
  PaymentRequiredError,
  ServerError,
  UnauthorizedError,
} from '../../src/api/errors.js';
import { enrich } from '../../src/run/enrich.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { emails, makeTempDir, writeCsv } from '../helpers/files.js';
import { REPO_ROOT, slowerThanIdleMs } from '../helpers/cli.js';
import { hangBound, run } from '../helpers/processes.js';

const sandboxes: Sandbox[] = [];
const clients: LeadClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(sandboxes.splice(0).map((s) => s.close()));
});

async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const s = await startSandbox({ port: 0, rpm: 60_000, ...options });
  sandboxes.push(s);
  return s;
}

/** Fast backoff, so that retries take milliseconds. */
const QUICK = { retries: 4, baseDelayMs: 2, maxDelayMs: 10 };

function client(s: Sandbox, options: Record<string, unknown> = {}): LeadClient {
  const c = new LeadClient({ baseUrl: s.baseUrl, token: s.token, retry: QUICK, ...options });
  clients.push(c);
  return c;
}

/** Awaits a rejection and returns it (fails the test when the promise resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

describe('LeadClient: retries what the CLI retries', () => {
  it('retries 500, 503 and reset connections until the call succeeds', async () => {
    const s = await sandbox({ faults: { error500: 0.2, error503: 0.2, reset: 0.2 }, seed: 7 });
    // 60 % of requests fail: with 12 retries, one of 20 calls failed all 13 attempts about once in
    // 40 runs (0.6^13 × 20); with 40, never in practice.
    const api = client(s, { retry: { retries: 40, baseDelayMs: 1, maxDelayMs: 5 } });
    const keys = emails(20);
    const answers = await Promise.all(keys.map((key) => api.lookupEmail(key)));
    expect(answers).toHaveLength(20);
    for (const answer of answers) expect(answer).toHaveProperty('lead');
    // Every kind of fault happened, and each one cost exactly one extra request.
    expect(s.stats.faults.error500).toBeGreaterThan(0);
    expect(s.stats.faults.error503).toBeGreaterThan(0);
    expect(s.stats.faults.reset).toBeGreaterThan(0);
    const faults = s.stats.faults.error500 + s.stats.faults.error503 + s.stats.faults.reset;
    expect(s.stats.byOperation.lookup_email).toBe(20 + faults);
  });

  it('never retries 400, 401 or 402: one request each', async () => {
    const s = await sandbox();
    const api = client(s);
    const rejected = await rejection(api.lookupEmail('reject.me@acme.com'));
    expect(rejected).toBeInstanceOf(BadRequestError);
    expect(s.stats.requests).toBe(1);

    const wrongToken = client(s, { token: 'not-the-sandbox-token' });
    expect(await rejection(wrongToken.lookupEmail('jane@acme.com'))).toBeInstanceOf(UnauthorizedError);
    expect(s.stats.requests).toBe(2);

    s.setCredits(0);
    const broke = await rejection(api.lookupEmail(emails(1)[0]!));
    expect(broke).toBeInstanceOf(PaymentRequiredError);
    expect(s.stats.requests).toBe(3);
  });

  it('retry: false surfaces the first failure', async () => {
    const s = await sandbox({ faults: { error503: 1 } });
    const api = client(s, { retry: false });
    const error = await rejection(api.lookupEmail('jane@acme.com'));
    expect(error).toBeInstanceOf(ServerError);
    expect(s.stats.requests).toBe(1);
  });

  it('gives up after `retries` and reports the last failure', async () => {
    const s = await sandbox({ faults: { error503: 1 } });
    const api = client(s, { retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 2 } });
    expect(await rejection(api.lookupEmail('jane@acme.com'))).toBeInstanceOf(ServerError);
    expect(s.stats.requests).toBe(3);
  });

  it('`direct` makes one attempt, however the client retries', async () => {
    const s = await sandbox({ faults: { error503: 1 } });
    const api = client(s);
    expect(await rejection(api.direct.lookupEmail('jane@acme.com'))).toBeInstanceOf(ServerError);
    expect(s.stats.requests).toBe(1);
    expect(api.direct.direct).toBe(api.direct);
  });
});

describe('LeadClient: one rate limit, paced evenly', () => {
  const RPM = 5;
  const WINDOW_MS = 500;

  it('rpm: N never sends more than N per window, and no 429 reaches the caller', async () => {
    const s = await sandbox({ rpm: RPM, windowMs: WINDOW_MS });
    const api = client(s, { rpm: RPM, windowMs: WINDOW_MS });
    const started = Date.now();
    const answers = await Promise.all(emails(12).map((key) => api.lookupEmail(key)));
    expect(answers).toHaveLength(12);
    expect(s.stats.rateLimited).toBe(0);
    for (const w of s.stats.windows) expect(w.requests).toBeLessThanOrEqual(RPM);
    // Paced: twelve calls at five per window span more than two windows.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * WINDOW_MS);
  });

  it('without rpm, a 429 waits for the server, then is sent again: no 429 reaches the caller', async () => {
    // The counterpart of the test above: the same burst with no gate meets the server's limit.
    const s = await sandbox({ rpm: RPM, windowMs: WINDOW_MS });
    const api = client(s, { windowMs: WINDOW_MS });
    const answers = await Promise.all(emails(12).map((key) => api.lookupEmail(key)));
    expect(answers).toHaveLength(12);
    expect(s.stats.rateLimited).toBeGreaterThan(0);
  });

  it("rpm: 'account' sizes the gate from /account/limits, read once", async () => {
    const s = await sandbox({ rpm: RPM, windowMs: WINDOW_MS });
    const api = client(s, { rpm: 'account', windowMs: WINDOW_MS });
    const answers = await Promise.all(emails(12).map((key) => api.lookupEmail(key)));
    expect(answers).toHaveLength(12);
    expect(s.stats.byOperation.limits).toBe(1);
    expect(s.stats.rateLimited).toBe(0);
    for (const w of s.stats.windows) expect(w.requests).toBeLessThanOrEqual(RPM);
  });

  it('close() drops the calls still waiting for the gate, with a LeadError', async () => {
    const s = await sandbox();
    const api = client(s, { rpm: 1, windowMs: 60_000 });
    const calls = emails(3).map((key) =>
      api.lookupEmail(key).then(
        () => 'ok',
        (error: unknown) => error,
      ),
    );
    // Once the call the gate let through has its answer (a fixed 50 ms was not always enough: the
    // connection's first request still open, close() reset it), the other two wait for the next minute.
    await Promise.race(calls);
    await api.close();
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
    const dropped = outcomes.filter((o) => o !== 'ok');
    expect(dropped).toHaveLength(2);
    for (const error of dropped) {
      expect(error).toBeInstanceOf(ClientClosedError);
      expect((error as LeadError).code).toBe('client_closed');
    }
    expect(s.stats.requests).toBe(1);
    expect(await rejection(api.lookupEmail('jane@acme.com'))).toBeInstanceOf(ClientClosedError);
  });

  it('enrich({ client }) keeps its own retry and gate: the client is used for single, ungated attempts', async () => {
    // Paced at one call a minute, the client's gate would hold this run for twenty minutes.
    const s = await sandbox();
    const api = client(s, { rpm: 1, windowMs: 60_000 });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(20).map((e) => [e])]);
    const summary = await enrich({ input, client: api, store: path.join(dir, 'store.sqlite'), tuning: { windowMs: 60_000 } });
    expect(summary.rows).toBe(20);
    expect(summary.status.error).toBe(0);
    expect(s.stats.byOperation.lookup_email).toBe(20);

    // An API down at start is waited for: the run's first read of the balance, then its
    // probe at 1 s, until the patience (2 s). Retried by the client too, each would be five.
    const failing = await sandbox({ faults: { error503: 1 } });
    const retrying = client(failing);
    const gaveUp = await enrich({
      input,
      client: retrying,
      store: path.join(dir, 'store.sqlite'),
      retries: 1,
      patience: '2s',
      tuning: { retryBaseDelayMs: 1, retryMaxDelayMs: 2 },
    });
    expect(gaveUp).toMatchObject({ stoppedBy: 'api_unavailable', errorCodes: { api_unavailable: 20 } });
    expect(failing.stats.requests).toBeGreaterThanOrEqual(2);
    expect(failing.stats.requests).toBeLessThanOrEqual(3);
  });
});

describe('LeadClient: options and errors', () => {
  const base = { baseUrl: 'http://127.0.0.1:9/v2', token: 'tok' };

  it('refuses an unknown option, naming it', () => {
    expect(() => new LeadClient({ ...base, rmp: 5 } as never)).toThrow(ConfigError);
    expect(() => new LeadClient({ ...base, rmp: 5 } as never)).toThrow(/Unknown LeadClient option 'rmp' \(did you mean 'rpm'\?\)/);
    expect(() => new LeadClient({ ...base, retry: { retires: 2 } } as never)).toThrow(/'retry\.retires'/);
  });

  it('refuses a bad rpm, retry or windowMs with the rule and what was got', () => {
    expect(() => new LeadClient({ ...base, rpm: 1.5 })).toThrow("Invalid LeadClient option rpm: must be a positive whole number or 'account', got 1.5");
    expect(() => new LeadClient({ ...base, rpm: 'all' as never })).toThrow(/got 'all'/);
    expect(() => new LeadClient({ ...base, retry: 'yes' as never })).toThrow(/Invalid LeadClient option retry/);
    expect(() => new LeadClient({ ...base, retry: { retries: -1 } })).toThrow(/retry\.retries/);
    expect(() => new LeadClient({ ...base, windowMs: 0 })).toThrow(/windowMs/);
    expect(() => new LeadClient(undefined as never)).toThrow(ConfigError);
  });

  it('LeadError and LeadEnrichError are one class', () => {
    expect(LeadError).toBe(LeadEnrichError);
    expect(new ConfigError('x')).toBeInstanceOf(LeadError);
    expect(new ClientClosedError()).toBeInstanceOf(LeadError);
  });
});

describe('LeadClient: the process', () => {
  const DIST_INDEX = path.join(REPO_ROOT, 'dist', 'index.js');

  it(
    'a paced client keeps the process alive while a call waits, and lets it exit when none does (no close())',
    async () => {
      expect(fs.existsSync(DIST_INDEX), 'build first: npx tsc -p tsconfig.json').toBe(true);
      const s = await sandbox();
      // Two calls per 300 ms window: the third waits for the next window, held only by the gate's
      // timer. After it, nothing is pending: the process must end by itself, long before the bound.
      const script = `
      import { LeadClient } from ${JSON.stringify(DIST_INDEX)};
      const client = new LeadClient({ baseUrl: process.env.BASE_URL, token: process.env.TOKEN, rpm: 2, windowMs: 300 });
      const keys = ['a@acme.com', 'b@acme.com', 'c@acme.com'];
      const answers = await Promise.all(keys.map((key) => client.lookupEmail(key)));
      console.log('answered ' + answers.length);
    `;
      // A process held by something else than the gate would run until it is killed (30 s); one that
      // ends by itself takes well under 5 s, plus, on a loaded machine, how much slower than idle a
      // CLI's start is now.
      const slack = await slowerThanIdleMs(20_000);
      const started = Date.now();
      const { code, stdout, stderr } = await run(process.execPath, ['--input-type=module', '-e', script], {
        env: { PATH: process.env.PATH, BASE_URL: s.baseUrl, TOKEN: s.token },
        stdin: 'ignore',
        timeoutMs: 30_000,
      });
      expect(stderr).toBe('');
      expect(stdout.trim()).toBe('answered 3');
      expect(code).toBe(0);
      expect(Date.now() - started).toBeLessThan(5_000 + slack);
      expect(s.stats.byOperation.lookup_email).toBe(3);
    },
    hangBound(60_000),
  );
});

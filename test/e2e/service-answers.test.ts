// The service as it really answers, against the sandbox in each of its shapes: every form of "not
// found", a domain that matches several companies, an operation the token may not use, the daily
// limit, and a token pasted with its scheme. Each shape is one sandbox option; the default
// sandbox answers as it always did (sandbox.test.ts).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DailyLimitError, ForbiddenError, LeadEnrichError, BadRequestError } from '../../src/api/errors.js';
import { parseResponse } from '../../src/api/transport.js';
import { LeadClient } from '../../src/lookup/lead-client.js';
import { enrich, type EnrichOptions } from '../../src/run/enrich.js';
import { enrichRows } from '../../src/run/enrich-rows.js';
import { exitStatusOf } from '../../src/run/exit-status.js';
import { normalizeSandboxKey, sandboxAnswer } from '../../src/sandbox/data.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { ResultStore } from '../../src/store/result-store.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { readCsvObjects, writeCsv } from '../helpers/files.js';
import { accountOnlyServer } from '../helpers/servers.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';
import { hangBound } from '../helpers/processes.js';

// Only keys marked `notfound` are missed, so each test knows which rows are found.
const sandbox = sandboxesPerTest({ notFoundRate: 0 });

const CONCURRENCY = 4;
const lookups = (s: Sandbox) => (s.stats.byOperation.lookup_email ?? 0) + (s.stats.byOperation.lookup_domain ?? 0);

function run(s: Sandbox, dir: string, options: Partial<EnrichOptions> & { input: string }) {
  return enrich({
    baseUrl: s.baseUrl,
    token: s.token,
    store: path.join(dir, 'store.sqlite'),
    concurrency: CONCURRENCY,
    ...options,
    tuning: { retryBaseDelayMs: 5, retryMaxDelayMs: 20, ...options.tuning },
  });
}

/** `n` emails; every third one is never found (the sandbox's `notfound` marker). */
function emailFile(dir: string, n: number): string {
  const rows = Array.from({ length: n }, (_, i) => [i % 3 === 0 ? `miss${i}.notfound@acme.com` : `person${i}@globex.com`]);
  return writeCsv(path.join(dir, 'in.csv'), [['email'], ...rows]);
}

describe('not found in every shape', () => {
  it.each(['empty', 'null', 'absent', 'code1027', 'http404'] as const)(
    'not found as %s: not_found, billed free, one request per key, exit 0, and a re-run sends none',
    async (shape) => {
      const s = await sandbox({ notFoundShape: shape });
      const dir = tempDir();
      const input = emailFile(dir, 30);
      const summary = await run(s, dir, { input });
      expect(exitStatusOf(summary)).toBe(0);
      expect(lookups(s)).toBe(30);
      const out = readCsvObjects(path.join(dir, 'in.enriched.csv'));
      const misses = out.filter((row) => row.email!.includes('notfound'));
      expect(misses).toHaveLength(10);
      for (const row of misses) expect([row.lead_status, row.lead_billing, row.lead_name]).toEqual(['not_found', 'free', '']);
      expect(summary.status).toMatchObject({ found: 20, not_found: 10, error: 0 });
      const again = await run(s, dir, { input });
      expect(exitStatusOf(again)).toBe(0);
      expect(lookups(s)).toBe(30);
      expect(again.billing.cached).toBe(30);
    },
  );

  it('a wrong base URL is fatal at the first account call: exit 1, one line, no lookup sent', async () => {
    const s = await sandbox();
    const dir = tempDir();
    const input = emailFile(dir, 5);
    const wrong = s.baseUrl.replace(/\/v2$/, '/api/v2');
    const r = await runCli(['enrich', input], { env: { LEAD_API_BASE_URL: wrong, LEAD_API_TOKEN: s.token } });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('check the base URL');
    expect(lookups(s)).toBe(0);
  });

  it('a 404 on a lookup once the account calls answered is not found, whatever its body', async () => {
    const server = await accountOnlyServer(() => ({ status: 404, body: '' }));
    const dir = tempDir();
    const input = emailFile(dir, 6);
    try {
      const summary = await enrich({ input, baseUrl: server.baseUrl, token: 't', store: path.join(dir, 'store.sqlite') });
      expect(exitStatusOf(summary)).toBe(0);
      expect(summary.status).toMatchObject({ not_found: 6, error: 0 });
      expect(summary.billing.free).toBe(6);
    } finally {
      server.close();
    }
  });

  it('a single LeadClient call reads a 404 in the API error body as not found, and a bare router 404 as a wrong base URL', async () => {
    let body = { status: 'failed', error: { message: 'Email address not found' } } as object;
    const server = http.createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new LeadClient({ baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/v2`, token: 't', retry: false });
    try {
      const answer = await client.lookupEmail('jane@acme.com');
      expect(answer.lead).toEqual({});
      body = { status: 'failed', error: { code: 404, message: 'Not found' } };
      const error = await client.lookupEmail('jane@acme.com').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as Error).message).toContain('/v2');
    } finally {
      await client.close();
      server.close();
    }
  });
});

describe('a domain that matches several companies', () => {
  it('is found with the first company in the columns, lead_matches the count, one request per domain, every company in JSONL', async () => {
    const s = await sandbox({ companiesPerDomain: 3 });
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['domain'], ['acme.com'], ['globex.com'], ['acme.com'], ['nobody-notfound.com']]);
    const summary = await run(s, dir, { input });
    expect(exitStatusOf(summary)).toBe(0);
    expect(s.stats.byOperation.lookup_domain).toBe(3);
    const out = readCsvObjects(path.join(dir, 'in.enriched.csv'));
    const first = (domain: string) =>
      (sandboxAnswer('lookup_domain', normalizeSandboxKey('lookup_domain', domain)).data as { lead: { name: string } }).lead.name;
    expect(out.map((row) => [row.lead_status, row.lead_name, row.lead_matches])).toEqual([
      ['found', first('acme.com'), '3'],
      ['found', first('globex.com'), '3'],
      ['found', first('acme.com'), '3'],
      ['not_found', '', ''],
    ]);
    await run(s, dir, { input, output: path.join(dir, 'out.jsonl') });
    const lines = fs
      .readFileSync(path.join(dir, 'out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { lead?: unknown });
    expect((lines[0]!.lead as Array<{ name: string }>).map((c) => c.name)).toHaveLength(3);
    expect((lines[0]!.lead as Array<{ name: string }>)[0]!.name).toBe(first('acme.com'));
    // enrichRows carries every company too.
    const results = [];
    for await (const result of enrichRows([{ domain: 'acme.com' }], { baseUrl: s.baseUrl, token: s.token, store: path.join(dir, 'store.sqlite') }))
      results.push(result);
    expect(results[0]!.status).toBe('found');
    expect(results[0]!.lead).toHaveLength(3);
    expect(s.stats.byOperation.lookup_domain).toBe(3);
  });
});

describe('an operation the token may not use (403, code 1008)', () => {
  it('stops the run: exit 1 with one line naming the operation and the server words, at most concurrency + 2 lookups, nothing stored', async () => {
    const s = await sandbox({ forbidden: ['lookup_email'] });
    const dir = tempDir();
    const input = emailFile(dir, 300);
    const store = path.join(dir, 'store.sqlite');
    const r = await runCli(['enrich', input, '--concurrency', String(CONCURRENCY)], {
      env: { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: s.token, LEAD_ENRICH_STORE: store },
    });
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('/reverse_lookup/email');
    expect(lines[0]).toContain('You are not authorized to access this resource');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(lookups(s)).toBeLessThanOrEqual(CONCURRENCY + 2);
    const kept = ResultStore.open({ path: store });
    try {
      expect(kept.stats().entries).toBe(0);
    } finally {
      kept.close();
    }
  });

  it('the library throws ForbiddenError (forbidden) for 403/1008 and for 415, never retried', async () => {
    const s = await sandbox({ forbidden: ['mx'] });
    const client = new LeadClient({ baseUrl: s.baseUrl, token: s.token });
    try {
      const error = await client.findMx('acme.com').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ForbiddenError);
      expect((error as LeadEnrichError).code).toBe('forbidden');
      expect(s.stats.byOperation.mx).toBe(1);
    } finally {
      await client.close();
    }
    expect(() => parseResponse(415, {}, '', '/domain/resolve/mx')).toThrow(ForbiddenError);
    // The API's code decides before the status: 1008 at 200, and 1027 at 403, mean what the code says.
    expect(() => parseResponse(200, {}, JSON.stringify({ status: 'failed', error: { code: 1008, message: 'no' } }), '/x')).toThrow(ForbiddenError);
    expect(() => parseResponse(403, {}, JSON.stringify({ status: 'failed', error: { code: 1027, message: 'Email address not found' } }), '/x')).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
  });
});

describe('the daily limit (codes 1017 and 1032)', () => {
  it('stops at once: exit 3, at most concurrency + 2 lookups after the first 1017, the rest skipped/daily_limit; the next day the same command finishes, paying nothing twice', async () => {
    const s = await sandbox({ dailyLimit: 200 });
    const dir = tempDir();
    const input = emailFile(dir, 300);
    const started = Date.now();
    const first = await run(s, dir, { input });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(exitStatusOf(first)).toBe(3);
    expect(first.stoppedBy).toBe('daily_limit');
    expect(lookups(s)).toBeLessThanOrEqual(200 + 1 + CONCURRENCY + 2);
    const skipped = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
    expect(skipped.length).toBe(300 - 200);
    expect(new Set(skipped.map((row) => row.error_code))).toEqual(new Set(['daily_limit']));
    s.nextDay();
    const second = await run(s, dir, { input });
    expect(exitStatusOf(second)).toBe(0);
    expect(second.status).toMatchObject({ found: 200, not_found: 100 });
    expect(Math.max(...s.stats.charges.values())).toBe(1);
  });

  it('the CLI says in one line to run the same command again the next day', async () => {
    const s = await sandbox({ dailyLimit: 5 });
    const dir = tempDir();
    const input = emailFile(dir, 40);
    const r = await runCli(['enrich', input, '-q'], {
      env: { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: s.token, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') },
    });
    expect(r.code).toBe(3);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('run the same command again the next day');
  });

  it('a single LeadClient call throws DailyLimitError (daily_limit) and is never retried', async () => {
    const s = await sandbox({ dailyLimit: 0 });
    const client = new LeadClient({ baseUrl: s.baseUrl, token: s.token });
    try {
      const error = await client.lookupEmail('jane@acme.com').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DailyLimitError);
      expect((error as LeadEnrichError).code).toBe('daily_limit');
      expect(s.stats.byOperation.lookup_email).toBe(1);
    } finally {
      await client.close();
    }
    expect(() =>
      parseResponse(
        400,
        {},
        JSON.stringify({ status: 'failed', error: { code: 1032, message: 'You have reached your daily verify limit; please try next day' } }),
        '/x',
      ),
    ).toThrow(DailyLimitError);
  });
});

describe('MX and Whois wait for the server-side timeout', () => {
  it('the client waits the --timeout it sends plus a margin, beyond its own request timeout', async () => {
    const server = http.createServer((_req, res) => {
      // The server answers when its own timeout (400 ms) has passed, as the service does.
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'success', data: { domain: 'acme.com', mx_records: [], verified_on: '', time_taken: 400 } }));
      }, hangBound(400));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new LeadClient({ baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/v2`, token: 't', retry: false, timeoutMs: 100 });
    try {
      const answer = await client.findMx('acme.com', { timeout: hangBound(400) });
      expect(answer.time_taken).toBe(400);
    } finally {
      await client.close();
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('a token pasted with its scheme', () => {
  it.each(['Bearer ', 'Bearer:'])('a token given as "%s<token>" works and appears in no output', async (scheme) => {
    const s = await sandbox();
    const dir = tempDir();
    const input = emailFile(dir, 6);
    const r = await runCli(['enrich', input, '--json'], {
      env: { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: `${scheme}${s.token}`, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') },
    });
    expect(r.code).toBe(0);
    expect(s.stats.unauthorized).toBe(0);
    const outputs = [
      r.stdout,
      r.stderr,
      ...fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.csv'))
        .map((f) => fs.readFileSync(path.join(dir, f), 'utf8')),
    ];
    for (const text of outputs) expect(text).not.toContain(s.token);
  });
});

describe('the library and --with company meet the same answers', () => {
  it('enrichRows stops at the daily limit (skipped, daily_limit) and at the budget (skipped, budget) as enrich does', async () => {
    const s = await sandbox({ dailyLimit: 10 });
    const dir = tempDir();
    const rows = Array.from({ length: 40 }, (_, i) => ({ email: `person${i}@globex.com` }));
    const options = { baseUrl: s.baseUrl, token: s.token, store: path.join(dir, 'store.sqlite'), concurrency: CONCURRENCY };
    const codes = new Map<string, number>();
    for await (const result of enrichRows(rows, options)) {
      const word = result.status === 'skipped' ? result.error!.code : result.status;
      codes.set(word, (codes.get(word) ?? 0) + 1);
    }
    expect(Object.fromEntries(codes)).toEqual({ found: 10, daily_limit: 30 });
    s.nextDay();
    const charged = s.stats.creditsCharged;
    const budgeted = new Map<string, number>();
    for await (const result of enrichRows(rows, { ...options, budget: 12 })) {
      const word = result.status === 'skipped' ? result.error!.code : result.status;
      budgeted.set(word, (budgeted.get(word) ?? 0) + 1);
    }
    expect(s.stats.creditsCharged - charged).toBeLessThanOrEqual(12);
    expect(budgeted.get('budget')).toBeGreaterThan(0);
    expect(budgeted.get('found')).toBe(10 + (s.stats.creditsCharged - charged) / 4);
  });

  it('--with company: company_matches counts the companies, the first in the company columns', async () => {
    const s = await sandbox({ companiesPerDomain: 2 });
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com'], ['ben@acme.com']]);
    const summary = await run(s, dir, { input, with: ['company'] });
    expect(exitStatusOf(summary)).toBe(0);
    const out = readCsvObjects(path.join(dir, 'in.enriched.csv'));
    const first = (sandboxAnswer('lookup_domain', 'acme.com').data as { lead: { name: string } }).lead.name;
    expect(out.map((row) => [row.company_status, row.company_name, row.company_matches])).toEqual([
      ['found', first, '2'],
      ['found', first, '2'],
    ]);
    expect(s.stats.byOperation.lookup_domain).toBe(1);
  });
});

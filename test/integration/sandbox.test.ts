import { afterEach, describe, expect, it } from 'vitest';
import { normalizeSandboxKey, sandboxAnswer, sandboxCredits, type SandboxKeyOperation } from '../../src/sandbox/data.js';
import { startSandbox, type FaultKind, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';

const open: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const s = await startSandbox({ port: 0, ...options });
  open.push(s);
  return s;
}

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

async function call(
  sb: Sandbox,
  method: 'GET' | 'POST',
  path: string,
  init: { body?: unknown; rawBody?: string; token?: string | null; signal?: AbortSignal } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  const token = init.token === undefined ? sb.token : init.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (init.rawBody !== undefined) body = init.rawBody;
  else if (init.body !== undefined) body = JSON.stringify(init.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(sb.baseUrl + path, { method, headers, body, signal: init.signal });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const email = (sb: Sandbox, address: string) => call(sb, 'GET', `/reverse_lookup/email?email_address=${encodeURIComponent(address)}`);

/** The n-th key of a family that the pure data functions say is found (default notFoundRate). */
function foundKey(op: SandboxKeyOperation, make: (i: number) => string, n = 0): string {
  let seen = 0;
  for (let i = 0; i < 1000; i++) {
    const key = make(i);
    if (sandboxAnswer(op, normalizeSandboxKey(op, key)).kind === 'found' && seen++ === n) return key;
  }
  throw new Error('no found key');
}
const foundEmail = (n = 0) => foundKey('lookup_email', (i) => `person${i}@acme.com`, n);

describe('sandbox: operations', () => {
  it('answers every operation with the interface shapes', async () => {
    const sb = await sandbox();
    expect(sb.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2$/);
    expect(sb.token.split('.')).toHaveLength(3);

    const e = await email(sb, 'Jane.Doe@Acme.com ');
    expect(e.status).toBe(200);
    expect(e.headers.get('content-type')).toMatch(/application\/json/);
    expect(e.json.status).toBe('success');
    expect(e.json.data.email_address).toBe('jane.doe@acme.com');
    const lead = e.json.data.lead;
    expect(lead).toMatchObject({ type: 'person', company_domain: 'acme.com' });
    for (const f of ['id', 'name', 'contructed_title', 'profile_picture', 'network_url', 'title', 'company_name']) {
      expect(typeof lead[f]).toBe('string');
    }
    expect(Array.isArray(lead.addresses)).toBe(true);
    expect(lead.addresses).toHaveLength(1);
    expect(Object.keys(lead.addresses[0]).sort()).toEqual(['city', 'country', 'country_code', 'full_address', 'state']);
    expect(Number.isInteger(lead.total_experience_in_months)).toBe(true);
    expect(lead.network_url).toMatch(/^https:\/\/network\.example\/in\//);

    const u = await call(sb, 'GET', `/reverse_lookup/network?url=${encodeURIComponent('HTTPS://Network.Example/in/Jane/?utm=1')}`);
    expect(u.status).toBe(200);
    expect(Object.keys(u.json.data)).toEqual(['lead']);
    expect(u.json.data.lead.network_url).toBe('https://network.example/in/Jane');
    expect(u.json.data.lead.company_domain).toMatch(/\.example$/);

    const d = await call(sb, 'GET', '/reverse_lookup/domain?name=https://www.Acme.com/about');
    expect(d.status).toBe(200);
    expect(d.json.data.name).toBe('acme.com');
    expect(d.json.data.lead).toMatchObject({ type: 'company', name: lead.company_name });
    expect(Array.isArray(d.json.data.lead.addresses)).toBe(false);
    expect(Object.keys(d.json.data.lead.addresses).sort()).toEqual(['country', 'country_code', 'full_address']);

    const mx = await call(sb, 'POST', '/domain/resolve/mx', { body: { domain: 'acme.com', timeout: 5000 } });
    expect(mx.status).toBe(200);
    expect(mx.json.data.domain).toBe('acme.com');
    const records = mx.json.data.mx_records as Array<{ exchange: string; priority: number }>;
    expect(records.length).toBeGreaterThanOrEqual(1);
    expect(records.length).toBeLessThanOrEqual(3);
    expect(records[0]).toEqual({ exchange: 'mx1.acme.com', priority: 10 });
    expect(records.map((r) => r.priority)).toEqual([...records.map((r) => r.priority)].sort((a, b) => a - b));
    expect(mx.json.data.verified_on).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(typeof mx.json.data.time_taken).toBe('number');

    const nomx = await call(sb, 'POST', '/domain/resolve/mx', { body: { domain: 'nomx-corp.com' } });
    expect(nomx.json.data.mx_records).toEqual([]);

    const w = await call(sb, 'POST', '/domain/resolve/whois', { body: { domain: 'acme.com' } });
    expect(w.status).toBe(200);
    const rec = w.json.data.whoisRecord;
    expect(Object.keys(rec).sort()).toEqual(
      ['dnssec', 'domain', 'last_update_whois_database', 'nameservers', 'notice', 'registrant', 'registrar', 'term_of_use'].sort(),
    );
    expect(rec.domain.name).toBe('acme.com');
    expect(typeof rec.domain.status).toBe('object');
    expect(rec.registrant).toHaveProperty('steet');
    expect(rec.registrant.admin).toHaveProperty('steet');
    expect(rec.registrant.tech).toHaveProperty('email', 'tech@acme.com');
    expect(rec.registrant.admin).not.toHaveProperty('admin');
    expect(rec.nameservers).toEqual([]);

    const plans = await call(sb, 'GET', '/account/myplans');
    expect(plans.json.data.current_plan.status).toBe('active');
    expect(plans.json.data.addons[0].next_charge_renewal).toBe('2026/12/01');

    const credits = await call(sb, 'GET', '/account/credits');
    const c = credits.json.data;
    expect(c.total_remaining_credits).toBe(sb.credits);
    const p = c.plan_remaining_credits;
    expect(p['pay-as-you-go'] + p.subscription + p.bonus).toBe(sb.credits);
    expect(c.low_credit_balance_min_threshold).toBe(100);

    const limits = await call(sb, 'GET', '/account/limits');
    const l = limits.json.data.email_verify;
    expect(l.api_rate_limit.total).toBe('600 RPM');
    expect(l.api_rate_limit.remaining).toMatch(/^\d+ RPM$/);
    expect(Date.parse(l.api_rate_limit.next_limit_reset)).toBeGreaterThan(Date.now());
    expect(l.bulk_verify_concurrency_limit).toEqual({ total: '5 parallel bulk jobs', remaining: '5 parallel bulk jobs' });
    expect(limits.headers.get('x-ratelimit-limit')).toBe('600');
    expect(limits.headers.get('x-ratelimit-remaining')).toBe(String(600 - 9));
    expect(limits.headers.get('x-ratelimit-reset')).toBe('60');

    expect(sb.stats.byOperation).toMatchObject({
      lookup_email: 1,
      lookup_url: 1,
      lookup_domain: 1,
      mx: 2,
      whois: 1,
      myplans: 1,
      credits: 1,
      limits: 1,
      unknown: 0,
    });
  });

  it('answers a miss with an empty lead and charges nothing', async () => {
    const sb = await sandbox();
    const r = await email(sb, 'someone.notfound@acme.com');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'success', data: { email_address: 'someone.notfound@acme.com', lead: {} } });
    const d = await call(sb, 'GET', '/reverse_lookup/domain?name=notfound.io');
    expect(d.json).toEqual({ status: 'success', data: { name: 'notfound.io', lead: {} } });
    expect(sb.stats.creditsCharged).toBe(0);
    expect(sb.credits).toBe(10000);

    const all = await sandbox({ notFoundRate: 1 });
    expect((await email(all, foundEmail())).json.data.lead).toEqual({});
  });

  it('rejects bad input with 400 and reasons', async () => {
    const sb = await sandbox();
    const missing = await call(sb, 'GET', '/reverse_lookup/email');
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({
      status: 'failed',
      error: {
        message: 'validation failed',
        reasons: [{ field: ['email_address'], location: 'query', messages: ['"email_address" is required'], types: ['any.required'] }],
      },
    });
    for (const bad of ['no-at-sign', 'a@b@c.com', 'x@localhost', 'please-reject@acme.com', '']) {
      const r = await email(sb, bad);
      expect(r.status, bad).toBe(400);
      expect(r.json.error.reasons[0].field).toEqual(['email_address']);
    }
    expect((await call(sb, 'GET', '/reverse_lookup/network?url=ftp://x.com/in/a')).status).toBe(400);
    expect((await call(sb, 'GET', '/reverse_lookup/network?url=network.example/in/a')).status).toBe(400);
    expect((await call(sb, 'GET', '/reverse_lookup/domain?name=localhost')).status).toBe(400);

    const t = await call(sb, 'POST', '/domain/resolve/mx', { body: { domain: 'acme.com', timeout: 200000 } });
    expect(t.status).toBe(400);
    expect(t.json.error.reasons).toEqual([
      { field: ['timeout'], location: 'body', messages: ['"timeout" must be less than or equal to 110000'], types: ['number.max'] },
    ]);
    for (const timeout of [0, -5, 'abc', null]) {
      const r = await call(sb, 'POST', '/domain/resolve/whois', { body: { domain: 'acme.com', timeout } });
      expect(r.status, String(timeout)).toBe(400);
    }
    const json = await call(sb, 'POST', '/domain/resolve/whois', { rawBody: '{"domain": ' });
    expect(json.status).toBe(400);
    expect(json.json.error.reasons[0].location).toBe('body');
    const noDomain = await call(sb, 'POST', '/domain/resolve/mx', { body: {} });
    expect(noDomain.json.error.reasons[0]).toMatchObject({ field: ['domain'], types: ['any.required'] });
    expect((await call(sb, 'POST', '/domain/resolve/mx', { body: { domain: 'reject.com' } })).status).toBe(400);
    expect(sb.stats.creditsCharged).toBe(0);
  });

  it('answers 401 before the path, and after revokeToken', async () => {
    const sb = await sandbox();
    for (const token of [null, 'wrong', `${sb.token}x`]) {
      const r = await call(sb, 'GET', '/no/such/path', { token });
      expect(r.status).toBe(401);
      expect(r.json).toEqual({ status: 'failed', error: { code: 1000, message: 'Invalid API Token, please generate new token' } });
      expect(r.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const lower = await fetch(`${sb.baseUrl}/account/credits`, { headers: { authorization: `bearer ${sb.token}` } });
    expect(lower.status).toBe(401);
    expect((await call(sb, 'GET', '/account/credits')).status).toBe(200);
    sb.revokeToken();
    expect((await call(sb, 'GET', '/account/credits')).status).toBe(401);
    expect(sb.stats.unauthorized).toBe(5);
  });

  it('answers 404 for an unknown path or method with a valid token', async () => {
    const sb = await sandbox();
    const r = await call(sb, 'GET', '/no/such/path');
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ status: 'failed', error: { code: 404, message: 'Not found' } });
    expect(r.headers.get('x-ratelimit-limit')).toBe('600');
    expect((await call(sb, 'GET', '/domain/resolve/mx')).status).toBe(404);
    expect((await fetch(sb.baseUrl.replace('/v2', '/v1') + '/account/credits', { headers: { authorization: `Bearer ${sb.token}` } })).status).toBe(404);
    expect(sb.stats.byOperation.unknown).toBe(3);
  });
});

describe('sandbox: rate limit', () => {
  it('answers 429 once rpm were accepted in the window, then recovers', async () => {
    const windowMs = 400;
    const sb = await sandbox({ rpm: 3, windowMs });
    for (let i = 0; i < 3; i++) {
      const r = await call(sb, 'GET', '/account/credits');
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(2 - i));
      expect(r.headers.get('x-ratelimit-reset')).toBe('1');
    }
    const limited = await call(sb, 'GET', '/account/limits');
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe(1030);
    expect(limited.json.error.message).toMatch(/^Too many requests, Retry after \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    const stamp = limited.json.error.message.match(/after (.*) UTC/)[1];
    const windowEnd = sb.stats.windows[0]!.start + windowMs;
    expect(Date.parse(`${stamp.replace(' ', 'T')}Z`)).toBeGreaterThanOrEqual(windowEnd);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('3');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-reset')).toBe('1');
    expect(limited.headers.get('retry-after')).toBeNull();
    // Unknown paths count once authenticated, and are limited too.
    expect((await call(sb, 'GET', '/nowhere')).status).toBe(429);

    await new Promise((r) => setTimeout(r, windowEnd - Date.now() + 20));
    const again = await call(sb, 'GET', '/account/limits');
    expect(again.status).toBe(200);
    expect(again.json.data.email_verify.api_rate_limit).toMatchObject({ total: '3 RPM', remaining: '2 RPM' });
    expect(sb.stats.rateLimited).toBe(2);
    expect(sb.stats.windows).toHaveLength(2);
    expect(sb.stats.windows[0]).toMatchObject({ requests: 5, accepted: 3, limited: 2 });
    expect(sb.stats.windows[1]).toMatchObject({ requests: 1, accepted: 1, limited: 0 });
  });

  it('can send Retry-After and the legacy message, and leave out the headers', async () => {
    const secs = await sandbox({ rpm: 1, rateLimitStyle: { retryAfter: 'seconds', message: 'legacy', rateLimitHeaders: false } });
    await call(secs, 'GET', '/account/credits');
    const r = await call(secs, 'GET', '/account/credits');
    expect(r.status).toBe(429);
    expect(r.json.error.code).toBeUndefined();
    expect(r.json.error.message).toMatch(/^Too many requests, Retry after \w{3} \w{3} \d\d \d{4} /);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
    expect(r.headers.get('x-ratelimit-limit')).toBeNull();

    const date = await sandbox({ rpm: 1, rateLimitStyle: { retryAfter: 'http-date' } });
    await call(date, 'GET', '/account/credits');
    const d = await call(date, 'GET', '/account/credits');
    expect(Date.parse(d.headers.get('retry-after')!)).toBeGreaterThan(Date.now() + 50_000);
  });
});

describe('sandbox: credits', () => {
  it('charges found results once per answer, keyed by normalized key', async () => {
    const sb = await sandbox();
    const key = foundEmail();
    await email(sb, key);
    await email(sb, `  ${key.toUpperCase()} `);
    await call(sb, 'POST', '/domain/resolve/mx', { body: { domain: 'WWW.Acme.com' } });
    await email(sb, 'x.notfound@acme.com');
    expect(sb.stats.charges.get(`lookup_email:${key}`)).toBe(2);
    expect(sb.stats.charges.get('mx:acme.com')).toBe(1);
    expect(sb.stats.charges.size).toBe(2);
    expect(sb.stats.creditsCharged).toBe(9);
    expect(sb.credits).toBe(10000 - 9);
  });

  it('answers 402 when the balance is exhausted or too low for a found result', async () => {
    const sb = await sandbox({ credits: 5, costs: { mx: 2 } });
    expect((await email(sb, foundEmail(0))).status).toBe(200);
    expect(sb.credits).toBe(1);
    const low = await email(sb, foundEmail(1));
    expect(low.status).toBe(402);
    expect(low.json).toEqual({
      status: 'failed',
      error: { code: 1002, message: 'You have exhausted your credits, please add additional credits to continue' },
    });
    expect((await email(sb, 'a.notfound@acme.com')).status).toBe(200);
    expect((await call(sb, 'POST', '/domain/resolve/mx', { body: { domain: 'acme.com' } })).status).toBe(402);
    sb.setCredits(0);
    expect((await email(sb, 'a.notfound@acme.com')).status).toBe(402);
    expect((await email(sb, 'not-an-email')).status).toBe(400); // validation comes first
    expect((await call(sb, 'GET', '/account/credits')).json.data.total_remaining_credits).toBe(0);
    expect(sb.stats.paymentRequired).toBe(3);
    sb.setCredits(4);
    expect((await email(sb, foundEmail(1))).status).toBe(200);
    expect(sb.credits).toBe(0);
    expect(() => sb.setCredits(-1)).toThrow(/credits.*non-negative integer.*-1/);
  });

  it('splits the balance into parts that sum to it', () => {
    for (const n of [0, 1, 99, 100, 101, 12345]) {
      const c = sandboxCredits(n, 10);
      const p = c.plan_remaining_credits;
      expect(p['pay-as-you-go'] + p.subscription + p.bonus).toBe(n);
    }
  });
});

describe('sandbox: faults', () => {
  const simple: Array<[FaultKind, (r: Reply) => void]> = [
    [
      'error500',
      (r) => {
        expect(r.status).toBe(500);
        expect(r.json).toEqual({ status: 'failed', error: { code: 500, message: 'Internal Server Error' } });
      },
    ],
    [
      'error503',
      (r) => {
        expect(r.status).toBe(503);
        expect(r.text).toBe('');
      },
    ],
    [
      'failed200',
      (r) => {
        expect(r.status).toBe(200);
        expect(r.json).toEqual({ status: 'failed', error: { code: 1099, message: 'Temporary failure, please retry' } });
      },
    ],
    [
      'truncated',
      (r) => {
        expect(r.status).toBe(200);
        expect(r.headers.get('content-type')).toMatch(/application\/json/);
        expect(r.text.startsWith('{"status":"success"')).toBe(true);
        expect(() => JSON.parse(r.text)).toThrow();
      },
    ],
  ];
  for (const [kind, check] of simple) {
    it(`injects ${kind} without processing the request`, async () => {
      const sb = await sandbox({ faults: { [kind]: 1 } });
      check(await email(sb, foundEmail()));
      check(await call(sb, 'GET', '/account/credits', { token: 'bad' })); // before auth
      expect(sb.stats.faults[kind]).toBe(2);
      expect(sb.stats.unauthorized).toBe(0);
      expect(sb.stats.creditsCharged).toBe(0);
      expect(sb.stats.windows[0]!.accepted).toBe(0);
      sb.setFaults({});
      expect((await email(sb, foundEmail())).status).toBe(200);
    });
  }

  it('injects reset: the socket is destroyed without an answer', async () => {
    const sb = await sandbox({ faults: { reset: 1 } });
    await expect(email(sb, foundEmail())).rejects.toThrow();
    expect(sb.stats.faults.reset).toBe(1);
    expect(sb.stats.creditsCharged).toBe(0);
  });

  it('injects hang, and close() returns promptly with the request still open', async () => {
    const sb = await sandbox({ faults: { hang: 1 } });
    await expect(call(sb, 'GET', '/account/credits', { signal: AbortSignal.timeout(150) })).rejects.toThrow();
    const pending = call(sb, 'POST', '/domain/resolve/mx', { body: { domain: 'acme.com' } });
    pending.catch(() => undefined);
    while (sb.stats.requests < 2) await new Promise((r) => setTimeout(r, 5));
    const t0 = Date.now();
    await sb.close();
    expect(Date.now() - t0).toBeLessThan(500);
    await expect(pending).rejects.toThrow();
    expect(sb.stats.faults.hang).toBe(2);
  });

  it('mixes faults by probability, the same way for the same seed', async () => {
    const run = async (seed: number): Promise<number[]> => {
      const sb = await sandbox({ seed, faults: { error500: 0.3, failed200: 0.2 } });
      const out: number[] = [];
      for (let i = 0; i < 40; i++) {
        const r = await call(sb, 'GET', '/account/credits');
        out.push(r.json?.status === 'failed' ? (r.status === 500 ? 1 : 2) : 0);
      }
      return out;
    };
    const a = await run(7);
    expect(await run(7)).toEqual(a);
    expect(a.filter((x) => x === 0).length).toBeGreaterThan(8);
    expect(a.filter((x) => x === 1).length).toBeGreaterThan(2);
    expect(a.filter((x) => x === 2).length).toBeGreaterThan(0);
  });
});

describe('sandbox: determinism and data rules', () => {
  it('gives the same data for the same key, across sandboxes and from the pure functions', async () => {
    const a = await sandbox();
    const b = await sandbox({ seed: 99 });
    const requests: Array<[string, 'GET' | 'POST', string, unknown?]> = [
      ['lookup_email', 'GET', `/reverse_lookup/email?email_address=${foundEmail(3)}`],
      ['lookup_url', 'GET', '/reverse_lookup/network?url=https://network.example/in/someone'],
      ['lookup_domain', 'GET', '/reverse_lookup/domain?name=globex.com'],
      ['mx', 'POST', '/domain/resolve/mx', { domain: 'globex.com' }],
      ['whois', 'POST', '/domain/resolve/whois', { domain: 'globex.com' }],
    ];
    for (const [op, method, path, body] of requests) {
      const first = await call(a, method, path, { body });
      const second = await call(a, method, path, { body });
      const other = await call(b, method, path, { body });
      expect(second.text).toBe(first.text);
      expect(other.text).toBe(first.text);
      const raw = body === undefined ? decodeURIComponent(path.split('=')[1]!) : (body as { domain: string }).domain;
      const k = op as SandboxKeyOperation;
      const answer = sandboxAnswer(k, normalizeSandboxKey(k, raw));
      expect(answer.kind).not.toBe('rejected');
      if (answer.kind !== 'rejected') expect(first.json.data).toEqual(answer.data);
    }
  });

  it('normalizes keys as documented', () => {
    expect(normalizeSandboxKey('lookup_email', '  John.Smith@Example.COM ')).toBe('john.smith@example.com');
    expect(normalizeSandboxKey('lookup_url', 'HTTPS://Network.Example/in/John-Smith/?trk=x#top')).toBe('https://network.example/in/John-Smith');
    expect(normalizeSandboxKey('lookup_url', 'https://network.example/')).toBe('https://network.example');
    expect(normalizeSandboxKey('lookup_url', ' not a url ')).toBe('not a url');
    expect(normalizeSandboxKey('lookup_domain', 'HTTPS://WWW.Acme.com:443/about?x=1')).toBe('acme.com');
    expect(normalizeSandboxKey('mx', 'Acme.com.')).toBe('acme.com');
    for (const [op, raw] of [
      ['lookup_url', 'HTTP://X.com/a/'],
      ['lookup_domain', 'http://www.x.org/y'],
    ] as const) {
      const once = normalizeSandboxKey(op, raw);
      expect(normalizeSandboxKey(op, once)).toBe(once);
    }
  });

  it('puts about notFoundRate of ordinary keys in the not-found bucket', () => {
    const keys = Array.from({ length: 2000 }, (_, i) => `user${i}@example.org`);
    const misses = (rate?: number) =>
      keys.filter((k) => sandboxAnswer('lookup_email', k, rate === undefined ? {} : { notFoundRate: rate }).kind === 'not_found').length;
    expect(misses()).toBeGreaterThan(140);
    expect(misses()).toBeLessThan(260);
    expect(misses(0)).toBe(0);
    expect(misses(1)).toBe(2000);
    expect(sandboxAnswer('lookup_email', 'x@notfound.example', { notFoundRate: 0 }).kind).toBe('not_found');
    expect(sandboxAnswer('lookup_email', 'reject.notfound@x.com').kind).toBe('rejected');
  });
});

describe('sandbox: options', () => {
  it('validates options with messages naming the option, the rule and the value', async () => {
    await expect(startSandbox({ rpm: 0 })).rejects.toThrow('Invalid sandbox option rpm: must be an integer >= 1, got 0');
    await expect(startSandbox({ credits: -1 })).rejects.toThrow(/credits: must be a non-negative integer, got -1/);
    await expect(startSandbox({ latencyMs: [10, 5] })).rejects.toThrow(/latencyMs/);
    await expect(startSandbox({ faults: { error500: 0.8, hang: 0.5 } })).rejects.toThrow(/sum to at most 1/);
    await expect(startSandbox({ faults: { boom: 1 } as never })).rejects.toThrow(/faults\.boom/);
    await expect(startSandbox({ rpmm: 5 } as never)).rejects.toThrow(/options\.rpmm: unknown option/);
    await expect(startSandbox({ token: 'has space' })).rejects.toThrow(/token/);
    await expect(startSandbox({ rateLimitStyle: { retryAfter: 'minutes' as never } })).rejects.toThrow(/retryAfter/);
  });

  it('applies latency before answering', async () => {
    const sb = await sandbox({ latencyMs: [60, 80], token: 'fixed.token.value' });
    expect(sb.token).toBe('fixed.token.value');
    const t0 = Date.now();
    expect((await call(sb, 'GET', '/account/credits')).status).toBe(200);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(55);
  });
});

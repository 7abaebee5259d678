// The batch pipeline through the library API, against the sandbox on 127.0.0.1.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { UnauthorizedError } from '../../src/api/errors.js';
import { formatSummary } from '../../src/cli/summary-text.js';
import { enrich, type EnrichOptions } from '../../src/run/enrich.js';
import { normalizeSandboxKey, sandboxAnswer } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { emails, makeTempDir, readCsvBytes, readCsvObjects, writeCsv } from '../helpers/files.js';
import { accountOnlyServer } from '../helpers/servers.js';

const sandboxes: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((s) => s.close()));
});

async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  // A generous rate unless a test is about the rate: the default 600 RPM would pace tests slowly.
  const s = await startSandbox({ port: 0, rpm: 60_000, ...options });
  sandboxes.push(s);
  return s;
}

function run(s: Sandbox, dir: string, options: Partial<EnrichOptions> & { input: EnrichOptions['input'] }) {
  return enrich({
    baseUrl: s.baseUrl,
    token: s.token,
    store: path.join(dir, 'store.sqlite'),
    ...options,
    tuning: { retryBaseDelayMs: 5, retryMaxDelayMs: 20, windowMs: 60_000, ...options.tuning },
  });
}

const lookupsMade = (s: Sandbox) => (s.stats.byOperation.lookup_email ?? 0) + (s.stats.byOperation.lookup_url ?? 0) + (s.stats.byOperation.lookup_domain ?? 0);

describe('enrich: rows and cells', () => {
  it('keeps every row in input order with its cells byte for byte, and adds the lead columns', async () => {
    const s = await sandbox({ latencyMs: [0, 15] });
    const dir = makeTempDir();
    const header = ['id', 'Email', 'note', 'note'];
    const rows = emails(150).map((email, i) => [
      String(i),
      i % 10 === 3 ? `  ${email.toUpperCase()} ` : email,
      i % 5 === 0 ? `multi\nline "quoted", cell ${i}` : `Zoë ${i} 東京`,
      i % 7 === 0 ? '=SUM(A1:A2)' : '',
    ]);
    const input = writeCsv(path.join(dir, 'in.csv'), [header, ...rows], '\r\n');
    const summary = await run(s, dir, { input });
    const out = readCsvBytes(path.join(dir, 'in.enriched.csv'));
    const inBytes = readCsvBytes(input);
    expect(out).toHaveLength(151);
    expect(out[0]!.slice(0, 5)).toEqual([...inBytes[0]!, 'lead_status']);
    expect(out[0]).toContain('lead_name');
    expect(out[0]).toContain('lead_billing');
    out.slice(1).forEach((row, i) => {
      expect(row.slice(0, 4)).toEqual(inBytes[i + 1]);
    });
    // Input cells starting with '=' stay as they are: only added cells are escaped.
    expect(out[1]![3]).toBe('=SUM(A1:A2)');
    // The output uses the input's line ending.
    expect(fs.readFileSync(path.join(dir, 'in.enriched.csv'), 'latin1').split('\r\n').length).toBeGreaterThan(150);
    expect(summary.rows).toBe(150);
    expect(summary.status.found + summary.status.not_found).toBe(150);
    const objects = readCsvObjects(path.join(dir, 'in.enriched.csv'));
    objects.forEach((row) => {
      const key = normalizeSandboxKey('lookup_email', row.Email!);
      const expected = sandboxAnswer('lookup_email', key);
      expect(row.lead_status).toBe(expected.kind);
      if (expected.kind === 'found') expect(row.lead_name).toBe(expected.data.lead.name);
    });
  });

  it('passes invalid UTF-8 bytes, a BOM and ragged rows through unchanged', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = path.join(dir, 'raw.csv');
    fs.writeFileSync(
      input,
      Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from('email,name\n'),
        Buffer.from('a@b.com,'),
        Buffer.from([0xff, 0xfe, 0x41]),
        Buffer.from('\nshort@row.com\nx@y.com,z,extra\n'),
      ]),
    );
    const summary = await run(s, dir, { input });
    const raw = fs.readFileSync(path.join(dir, 'raw.enriched.csv'));
    expect([...raw.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(raw.includes(Buffer.from([0xff, 0xfe, 0x41]))).toBe(true);
    const out = readCsvBytes(path.join(dir, 'raw.enriched.csv'));
    expect(out[2]!.slice(0, 2)).toEqual(['short@row.com', '']);
    expect(out[3]![2]).toBe('error');
    const sidecar = readCsvObjects(path.join(dir, 'raw.enriched.errors.csv'));
    expect(sidecar).toHaveLength(1);
    expect(sidecar[0]).toMatchObject({ row: '3', email: 'x@y.com', error_code: 'invalid_input' });
    expect(sidecar[0]!.error_message).toContain('extra');
    expect(summary.rows).toBe(3);
  });

  it('reads stdin-like streams and writes JSON Lines with the full nested results', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const found = emails(20).find((e) => sandboxAnswer('lookup_email', e).kind === 'found')!;
    const csv = `email,name,name\n${found},Jane,J\nnobody-notfound@acme.com,No,N\n`;
    const output = path.join(dir, 'out.jsonl');
    await run(s, dir, { input: Readable.from([Buffer.from(csv)]), output, format: 'jsonl' });
    const lines = fs
      .readFileSync(output, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ row: 1, lead_status: 'found', input: { email: found, name: 'Jane', name_2: 'J' } });
    expect(lines[0].lead.contructed_title).toBeTypeOf('string');
    expect(lines[1]).toMatchObject({ row: 2, lead_status: 'not_found', lead: {} });
  });

  it('escapes added cells that a spreadsheet would run as a formula', async () => {
    // A tiny server whose lead fields start with formula characters.
    const server = await accountOnlyServer(() => ({
      status: 200,
      body: JSON.stringify({
        status: 'success',
        data: { email_address: 'x', lead: { name: '=HYPERLINK("http://evil")', title: '+1', company_name: '-2', company_domain: '@x', network_url: '\tTab' } },
      }),
    }));
    try {
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['=cmd@x.com'], ['jane@x.com']]);
      await enrich({ input, baseUrl: server.baseUrl, token: 't', store: ':memory:' });
      const [row] = readCsvObjects(path.join(dir, 'in.enriched.csv')).slice(1);
      expect(row).toMatchObject({
        email: 'jane@x.com',
        lead_name: `'=HYPERLINK("http://evil")`,
        lead_title: "'+1",
        lead_company_name: "'-2",
        lead_company_domain: "'@x",
        lead_network_url: "'\tTab",
      });
    } finally {
      server.close();
    }
  });
});

describe('enrich: planning', () => {
  it('makes no request for invalid or empty keys and reports them in the sidecar; a blank line is no row', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['not-an-email'], [''], ['  '], ['a@@b.com']]);
    const summary = await run(s, dir, { input });
    expect(lookupsMade(s)).toBe(0);
    expect(summary.rows).toBe(3);
    expect(summary.status.error).toBe(2);
    expect(summary.status.skipped).toBe(1);
    expect(summary.errorCodes).toEqual({ invalid_input: 2, no_key: 1 });
    const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
    expect(sidecar.map((r) => r.row)).toEqual(['1', '2', '3']);
  });

  it('pays once per normalized key: duplicates in several spellings are answered once', async () => {
    const s = await sandbox({ latencyMs: [5, 20] });
    const dir = makeTempDir();
    const spellings = ['Jane.Doe@Acme.com', ' jane.doe@acme.com', 'JANE.DOE@ACME.COM ', 'mailto:jane.doe@acme.com'];
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...spellings.map((e) => [e]), ['other@acme.com']]);
    const summary = await run(s, dir, { input });
    expect(s.stats.byOperation.lookup_email).toBe(2);
    expect([...s.stats.charges.values()].every((n) => n === 1)).toBe(true);
    expect(summary.billing.duplicate).toBe(3);
  });

  it('pays once for a key repeated far down the same read batch, after its first answer has landed', async () => {
    // With one request in flight, the reader stops at 64 waiting rows until one settles, so the
    // repeat at row 300 is started long after the first request for that key finished.
    const s = await sandbox();
    const dir = makeTempDir();
    const others = emails(400);
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['email'],
      ['repeat@acme.com'],
      ...others.slice(0, 298).map((e) => [e]),
      ['Repeat@Acme.com'],
      ...others.slice(298).map((e) => [e]),
    ]);
    const summary = await run(s, dir, { input, concurrency: 1 });
    expect(s.stats.byOperation.lookup_email).toBe(401);
    expect([...s.stats.charges.values()].filter((n) => n > 1)).toEqual([]);
    expect(summary.billing.duplicate).toBe(1);
  });

  it('honours --by and --column, and fails clearly when nothing fits', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['who', 'place'],
      ['Jane', 'acme.com'],
      ['Bob', 'https://www.globex.io/about'],
    ]);
    await expect(run(s, dir, { input })).rejects.toThrow(/No lookup column found.*who, place/);
    expect(fs.existsSync(path.join(dir, 'in.enriched.csv'))).toBe(false);
    const summary = await run(s, dir, { input, by: 'domain', column: 'place' });
    expect(summary.lookup).toMatchObject({ kind: 'domain', column: 'place' });
    expect(s.stats.byOperation.lookup_domain).toBe(2);
    const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
    expect(rows[1]!.lead_name).toBe(
      sandboxAnswer('lookup_domain', 'globex.io').kind === 'found'
        ? (sandboxAnswer('lookup_domain', 'globex.io').data as { lead: { name: string } }).lead.name
        : '',
    );
  });

  it('adds MX and Whois columns, resolving each distinct domain once', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['a@acme.com'], ['b@acme.com'], ['c@globex.io'], ['d@nomx-corp.com']]);
    const summary = await run(s, dir, { input, with: ['mx', 'whois'] });
    expect(s.stats.byOperation.mx).toBe(3);
    expect(s.stats.byOperation.whois).toBe(3);
    const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
    expect(rows[0]!.mx_primary).toBe('mx1.acme.com');
    expect(rows[0]!.mx_records.startsWith('10 mx1.acme.com')).toBe(true);
    expect(rows[3]!.mx_primary).toBe('');
    expect(rows[0]!.whois_registrar).not.toBe('');
    expect(summary.rows).toBe(4);
  });
});

describe('enrich: failures', () => {
  it('retries transient faults until every row is answered, never charging a key twice', async () => {
    const s = await sandbox({ faults: { error500: 0.1, error503: 0.1, reset: 0.05, truncated: 0.05, failed200: 0.05 }, seed: 7 });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(120).map((e) => [e])]);
    const summary = await run(s, dir, { input, retries: 10 });
    expect(summary.status.error).toBe(0);
    expect(summary.status.found + summary.status.not_found).toBe(120);
    expect(summary.retries).toBeGreaterThan(0);
    expect([...s.stats.charges.values()].every((n) => n === 1)).toBe(true);
  });

  it('gives up on a key after the configured retries with the last error code', async () => {
    // Account calls answer; every lookup fails with 503.
    let lookups = 0;
    const server = await accountOnlyServer(() => {
      lookups += 1;
      return { status: 503, body: '' };
    });
    try {
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['a@acme.com'], ['b@acme.com']]);
      const summary = await enrich({ input, baseUrl: server.baseUrl, token: 't', store: ':memory:', retries: 2, tuning: { retryBaseDelayMs: 1 } });
      expect(lookups).toBe(6);
      expect(summary.errorCodes).toEqual({ server_error: 2 });
      expect(summary.retries).toBe(4);
      const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
      expect(sidecar.map((r) => r.error_code)).toEqual(['server_error', 'server_error']);
      expect(sidecar[0]!.error_message).toContain('503');
    } finally {
      server.close();
    }
  });

  it('does not retry a rejected key (400) and writes it as an error row', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['reject.me@acme.com'], ['ok@acme.com']]);
    const summary = await run(s, dir, { input });
    expect(s.stats.byOperation.lookup_email).toBe(2);
    expect(summary.errorCodes).toEqual({ bad_request: 1 });
    const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
    expect(sidecar).toHaveLength(1);
    expect(sidecar[0]).toMatchObject({ row: '1', error_code: 'bad_request' });
  });

  it('stops on a rejected token (401) and leaves no output file behind', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(20).map((e) => [e])]);
    await expect(run(s, dir, { input, token: 'wrong-token' })).rejects.toBeInstanceOf(UnauthorizedError);
    s.revokeToken();
    await expect(run(s, dir, { input })).rejects.toBeInstanceOf(UnauthorizedError);
    expect(fs.readdirSync(dir).filter((f) => f.includes('enriched'))).toEqual([]);
  });
});

describe('enrich: rate limit', () => {
  it('sizes itself from /account/limits and never exceeds the window', async () => {
    const s = await sandbox({ rpm: 20, windowMs: 1000 });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(50).map((e) => [e])]);
    const summary = await run(s, dir, { input, tuning: { windowMs: 1000, edgeMarginMs: 20 } });
    expect(summary.rateLimited).toBe(0);
    expect(s.stats.rateLimited).toBe(0);
    for (const w of s.stats.windows) expect(w.accepted).toBeLessThanOrEqual(20);
    expect(summary.status.found + summary.status.not_found).toBe(50);
  });

  it('pauses everything on a 429 and retries the row: nothing lost, nothing charged twice', async () => {
    // --rpm above the account's limit forces 429s; the server's hints bring the run back in line.
    const s = await sandbox({ rpm: 10, windowMs: 400 });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(40).map((e) => [e])]);
    const summary = await run(s, dir, { input, rpm: 100, tuning: { windowMs: 400, edgeMarginMs: 10 } });
    expect(summary.rateLimited).toBeGreaterThan(0);
    expect(summary.status.found + summary.status.not_found).toBe(40);
    expect([...s.stats.charges.values()].every((n) => n === 1)).toBe(true);
    // No hot loop: 429s stay a small multiple of the rows.
    expect(s.stats.rateLimited).toBeLessThan(200);
    // A window other than a minute is said as it is, not as "RPM".
    expect(summary.windowMs).toBe(400);
    expect(formatSummary(summary)).toMatch(/^Requests: \d+ \(retries \d+, rate-limited \d+\) at up to 100 per 400ms$/m);
  });
});

describe('enrich: credits', () => {
  it('makes no lookup when the balance is already at the reserve', async () => {
    const s = await sandbox({ credits: 100, threshold: 100 });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(5).map((e) => [e])]);
    const summary = await run(s, dir, { input });
    expect(lookupsMade(s)).toBe(0);
    expect(summary.status.skipped).toBe(5);
    expect(summary.errorCodes).toEqual({ credit_reserve: 5 });
    expect(summary.stoppedBy).toBe('credits');
  });

  it('never takes the balance below the reserve, and skips the rest', async () => {
    const s = await sandbox({ credits: 140, threshold: 0, notFoundRate: 0, latencyMs: [5, 10] });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(40).map((e) => [e])]);
    const summary = await run(s, dir, { input, minCredits: 100 });
    expect(s.credits).toBeGreaterThanOrEqual(100);
    expect(summary.status.found).toBe(10);
    expect(summary.status.skipped).toBe(30);
    expect(summary.stoppedBy).toBe('credits');
    expect(summary.credits).toMatchObject({ before: 140, after: 100, spent: 40, reserve: 100 });
    const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
    expect(sidecar.every((r) => r.error_code === 'credit_reserve')).toBe(true);
  });

  it('stops new lookups on a 402 and writes every row', async () => {
    // The server charges 5 for a found lead where the guard assumes the published 4: with 12
    // credits the guard lets a third lookup start, and the server answers it 402.
    const s = await sandbox({ credits: 12, threshold: 0, notFoundRate: 0, costs: { person: 5 } });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(10).map((e) => [e])]);
    const summary = await run(s, dir, { input, minCredits: 0, concurrency: 1 });
    expect(s.stats.paymentRequired).toBeGreaterThanOrEqual(1);
    expect(summary.rows).toBe(10);
    expect(summary.status.found).toBe(2);
    expect(summary.status.skipped).toBe(8);
    expect(summary.stoppedBy).toBe('credits');
    const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
    expect(sidecar.map((r) => r.error_code)).toEqual(Array(8).fill('credit_reserve'));
  });
});

describe('enrich: the last balance reading', () => {
  it('waits out a 429 on the last reading and asks again: "credits after" exact, the 429 counted', async () => {
    // A server whose window is used up when the run reads its balance at the end: that reading
    // is refused once (Retry-After: 1), then answered.
    let creditReads = 0;
    let balance = 1000;
    const server = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      res.setHeader('content-type', 'application/json');
      if (url.pathname.endsWith('/account/credits')) {
        creditReads += 1;
        if (creditReads === 2) {
          res.writeHead(429, { 'retry-after': '1' });
          return res.end(JSON.stringify({ status: 'failed', error: { code: 1030, message: 'Too many requests' } }));
        }
        return res.end(
          JSON.stringify({ status: 'success', data: { total_remaining_credits: balance, plan_remaining_credits: {}, low_credit_balance_min_threshold: 0 } }),
        );
      }
      if (url.pathname.endsWith('/account/limits')) {
        const reset = new Date(Date.now() + 60_000).toISOString();
        return res.end(
          JSON.stringify({
            status: 'success',
            data: { email_verify: { api_rate_limit: { total: '6000 RPM', remaining: '6000 RPM', next_limit_reset: reset } } },
          }),
        );
      }
      balance -= 4;
      return res.end(JSON.stringify({ status: 'success', data: { email_address: url.searchParams.get('email_address'), lead: { name: 'Ann' } } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(3).map((e) => [e])]);
      const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/v2`;
      const summary = await enrich({ input, baseUrl, token: 't', store: ':memory:' });
      expect(creditReads).toBe(3);
      expect(summary.rateLimited).toBe(1);
      expect(summary.credits).toMatchObject({ before: 1000, after: 988, spent: 12, exact: true });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('enrich: progress', () => {
  it('reports rows as they are written, not once per read batch, on a paced run', async () => {
    // 150 rows fit in one read batch; at 1200 RPM (20 a second) they take about 7 seconds.
    const s = await sandbox({ rpm: 1200 });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(150).map((e) => [e])]);
    const seen: Array<{ rowsDone: number; rowsRead: number }> = [];
    const summary = await run(s, dir, {
      input,
      onProgress: (p) => seen.push({ rowsDone: p.rowsDone, rowsRead: p.rowsRead }),
      tuning: { progressIntervalMs: 200 },
    });
    expect(summary.rows).toBe(150);
    const midway = seen.filter((p) => p.rowsDone > 0 && p.rowsDone < 150);
    expect(midway.length, JSON.stringify(seen)).toBeGreaterThanOrEqual(5);
  }, 20_000);
});

describe('enrich: interrupt', () => {
  it('stops starting lookups, writes the rest as skipped/interrupted, and a re-run finishes', async () => {
    const s = await sandbox({ rpm: 60, windowMs: 1000, latencyMs: [5, 10] });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(100).map((e) => [e])]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const first = await run(s, dir, { input, signal: controller.signal, tuning: { windowMs: 1000, drainTimeoutMs: 500 } });
    expect(first.stoppedBy).toBe('interrupt');
    expect(first.rows).toBe(100);
    expect(first.errorCodes.interrupted).toBeGreaterThan(0);
    const charged = s.stats.creditsCharged;
    const second = await run(s, dir, { input, tuning: { windowMs: 1000 } });
    expect(second.stoppedBy).toBeUndefined();
    expect(second.status.skipped).toBe(0);
    expect(second.billing.cached).toBe(first.billing.charged + first.billing.free);
    // The second run paid only for keys the first did not answer.
    expect(s.stats.creditsCharged - charged).toBe(second.billing.charged * 4);
  });
});

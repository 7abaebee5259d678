// enrichRows (cli-contract.md, "Library"): rows already in memory or in a cursor, results in input
// order, pulled only as fast as they are consumed, and a loop that breaks stops the lookups.
// enrich() with streams in and out. Against the sandbox, counting requests server-side.
import http from 'node:http';
import path from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LeadEnrichError, RowError } from '../../src/api/errors.js';
import { enrich } from '../../src/run/enrich.js';
import { enrichRows, type RowResult } from '../../src/run/enrich-rows.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { hangBound, run } from '../helpers/processes.js';

const sandbox = sandboxesPerTest({ notFoundRate: 0 });
const lookups = (s: Sandbox) => s.stats.byOperation.lookup_email ?? 0;

/** A Postgres-cursor-shaped source: an async generator that yields rows one at a time, counting them. */
function cursor(n: number, prefix = 'row') {
  const pulled = { count: 0 };
  async function* rows() {
    for (let i = 1; i <= n; i += 1) {
      pulled.count += 1;
      await Promise.resolve();
      yield { id: i, email: `${prefix}${i}@${prefix}${i % 7}.example.com`, note: i % 2 ? 'odd' : 'even' };
    }
  }
  return { rows: rows(), pulled };
}

describe('enrichRows', () => {
  it('yields one result per row, in input order, with the answer, the row as given and its billing', async () => {
    const s = await sandbox({ latencyMs: [0, 15] });
    const { rows } = cursor(300);
    const results: RowResult[] = [];
    for await (const result of enrichRows(rows, { baseUrl: s.baseUrl, token: s.token, store: ':memory:' })) results.push(result);
    expect(results.map((r) => r.row)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(results.every((r, i) => (r.input as { id: number }).id === i + 1)).toBe(true);
    expect(results[0]).toMatchObject({ status: 'found', source: 'email', billing: 'charged', error: undefined });
    expect(results[0]!.lead).toMatchObject({ name: expect.any(String) });
    expect(lookups(s)).toBe(300);
  });

  it('takes arrays with options.header, and says why a row has no answer with a LeadError of the sidecar code', async () => {
    const s = await sandbox();
    const rows = [
      ['ann@acme.com', 'Ann'],
      ['', 'No email'],
      ['broken@', 'Broken'],
      ['ann@acme.com', 'Ann again'],
    ];
    const results: RowResult[] = [];
    for await (const result of enrichRows(rows, { header: ['email', 'name'], baseUrl: s.baseUrl, token: s.token, store: ':memory:' })) results.push(result);
    expect(results.map((r) => [r.status, r.billing, r.error?.code])).toEqual([
      ['found', 'charged', undefined],
      ['skipped', 'none', 'no_key'],
      ['error', 'none', 'invalid_input'],
      ['found', 'duplicate', undefined],
    ]);
    expect(results[1]!.error).toBeInstanceOf(RowError);
    expect(results[1]!.error).toBeInstanceOf(LeadEnrichError);
    expect(results[3]!.input).toEqual(['ann@acme.com', 'Ann again']);
    expect(lookups(s)).toBe(1);
  });

  it('the status says which fields are there, as the result type promises: found has a lead, error and skipped an error', async () => {
    const s = await sandbox();
    interface Contact {
      email: string;
    }
    const rows: Contact[] = ['ann@acme.com', 'x@notfound-corp.com', 'reject@acme.com', '', 'ann@acme.com', 'broken@'].map((email) => ({ email }));
    const options = { baseUrl: s.baseUrl, token: s.token, store: ':memory:', with: ['company' as const] };
    const seen: string[] = [];
    for await (const r of enrichRows(rows, options)) {
      const lead = r.lead === undefined ? 'no' : Object.keys(r.lead).length > 0 ? 'yes' : 'empty';
      const present = `${r.status}: lead ${lead}, error ${r.error === undefined ? 'no' : 'yes'}`;
      seen.push(`${r.input.email} ${present}`);
    }
    expect(seen).toEqual([
      'ann@acme.com found: lead yes, error no',
      // The API's own answer for a miss (here an empty lead object), as the type allows.
      'x@notfound-corp.com not_found: lead empty, error no',
      'reject@acme.com error: lead no, error yes',
      ' skipped: lead no, error yes',
      'ann@acme.com found: lead yes, error no',
      'broken@ error: lead no, error yes',
    ]);
  });

  it('pulls rows only as results are consumed: a slow consumer holds the window, not the whole input', async () => {
    const s = await sandbox();
    const { rows, pulled } = cursor(20_000, 'slow');
    let taken = 0;
    for await (const _ of enrichRows(rows, { baseUrl: s.baseUrl, token: s.token, store: ':memory:' })) {
      taken += 1;
      if (taken === 10) {
        await new Promise((resolve) => setTimeout(resolve, 300));
        // Ten taken after a pause: at most the reorder window (4096) and a batch were read ahead.
        expect(pulled.count).toBeLessThanOrEqual(4096 + 128);
      }
      if (taken === 20) break;
    }
    expect(pulled.count).toBeLessThan(5000);
  });

  it('breaking out of the loop stops the lookups: no request after the break beyond those in flight', async () => {
    const s = await sandbox({ latencyMs: [20, 40] });
    const { rows } = cursor(5000, 'brk');
    // Requests counted where they are made (http.Agent), not by when the server sees them: one
    // written just before the break may be read by a busy server after it.
    // (addRequest is how every http.Agent takes a request, though @types/node does not list it.)
    const agent = http.Agent.prototype as unknown as { addRequest: (...args: unknown[]) => unknown };
    const addRequest = agent.addRequest;
    let issued = 0;
    agent.addRequest = function (this: unknown, ...args: unknown[]) {
      issued += 1;
      return addRequest.apply(this, args);
    };
    let atBreak = 0;
    try {
      let n = 0;
      for await (const _ of enrichRows(rows, { baseUrl: s.baseUrl, token: s.token, store: ':memory:', concurrency: 4 })) {
        if (++n === 5) break;
      }
      atBreak = issued;
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      agent.addRequest = addRequest;
    }
    // What reached the server was made before the loop ended (a request got had not yet put on
    // the wire is refused at the closed agent, and never sent).
    expect(atBreak).toBeGreaterThan(5);
    expect(s.stats.requests).toBeLessThanOrEqual(atBreak);
    expect(atBreak).toBeLessThan(100);
  });

  it(
    'leaves nothing open after a break: a process that breaks out exits on its own',
    async () => {
      const s = await sandbox();
      const script = `
      import { enrichRows } from ${JSON.stringify(path.join(REPO_ROOT, 'dist', 'index.js'))};
      async function* rows() { for (let i = 0; i < 100000; i++) yield { email: 'p' + i + '@exit.example.com' }; }
      let n = 0;
      for await (const r of enrichRows(rows(), { baseUrl: ${JSON.stringify(s.baseUrl)}, token: ${JSON.stringify(s.token)}, store: ':memory:' })) if (++n === 3) break;
      console.log('broke after', n);
    `;
      const r = await run(process.execPath, ['--input-type=module', '-e', script], { stdin: 'ignore', timeoutMs: 15_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('broke after 3');
    },
    hangBound(20_000),
  );

  it('a 401 rejects the loop with the API error, after the rows before it', async () => {
    const s = await sandbox();
    const iterate = async () => {
      for await (const _ of enrichRows([{ email: 'a@acme.com' }], { baseUrl: s.baseUrl, token: 'wrong', store: ':memory:' })) {
        // no row: the account read is refused first
      }
    };
    await expect(iterate()).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it('rejects options that belong to files, naming them', () => {
    expect(() => enrichRows([], { output: 'x.csv' } as never)).toThrow(/Invalid option output: not an option of enrichRows/);
    // A file's title lines and --limit are the reader's: an iterable is cut by its own caller.
    expect(() => enrichRows([], { limit: 10 } as never)).toThrow(/Invalid option limit: not an option of enrichRows/);
    expect(() => enrichRows([], { rpm: 0 })).toThrow(/Invalid option rpm: must be a positive integer, got 0/);
  });
});

describe('enrich() with streams', () => {
  it('reads a Readable, writes the output and the sidecar to Writables, never to process.stdout', async () => {
    const s = await sandbox();
    const chunks: Buffer[] = [];
    const sideChunks: Buffer[] = [];
    const output = new Writable({ write: (chunk: Buffer, _e, done) => (chunks.push(chunk), done()) });
    const errors = new Writable({ write: (chunk: Buffer, _e, done) => (sideChunks.push(chunk), done()) });
    const writes: unknown[] = [];
    const original = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => (
      writes.push(chunk), (original as (...a: unknown[]) => boolean)(chunk, ...rest)
    )) as typeof process.stdout.write;
    try {
      const summary = await enrich({
        input: Readable.from(['email,name\nann@acme.com,Ann\nbroken@,B\n']),
        output,
        errors,
        baseUrl: s.baseUrl,
        token: s.token,
        store: ':memory:',
      });
      expect(summary).toMatchObject({ rows: 2, output: '(stream)' });
    } finally {
      process.stdout.write = original;
    }
    expect(writes).toEqual([]);
    expect(Buffer.concat(chunks).toString()).toMatch(/^email,name,lead_status,lead_name.*\nann@acme\.com,Ann,found,/s);
    expect(Buffer.concat(sideChunks).toString()).toMatch(/^row,email,name,error_code,error_message\n2,broken@,B,invalid_input,/);
    expect(output.writableEnded).toBe(true);
  });

  it('refuses a stream input with no output rather than writing to stdout', async () => {
    await expect(enrich({ input: new PassThrough() })).rejects.toThrow(/Invalid option output: must be given for a stream input/);
  });
});

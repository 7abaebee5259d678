// Shared by the reliability suite (test/reliability/*.test.ts): sandboxes that carry a
// distinctive token, environments for the built CLI, expected answers computed without HTTP,
// tiny misbehaving servers, and the checks every scenario repeats (no token anywhere, no stack
// trace, outputs equal but for lead_billing).
//
// Every sandbox here uses SECRET as its token, so that each scenario (faults, kills, signals,
// 429 storms, hostile servers) also proves that the token never reaches stdout, stderr, the
// outputs, the sidecar or the store.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'vitest';
import { normalizeSandboxKey, sandboxAnswer } from '../../../src/sandbox/data.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../../src/sandbox/server.js';
import { ResultStore } from '../../../src/store/result-store.js';
import type { CliProcess, CliResult } from '../../helpers/cli.js';
import { readCsvObjects } from '../../helpers/files.js';

/** A token nobody could mistake for anything else: it must never show anywhere. */
export const SECRET = `tok-SECRET-${randomBytes(8).toString('hex')}-never-print-me`;

/** Sandboxes started by a test file; close them in afterEach/afterAll with closeAll(). */
const open: Array<{ close(): Promise<void> | void }> = [];
export async function closeAll(): Promise<void> {
  await Promise.all(open.splice(0).map((s) => s.close()));
}

/** A sandbox with the secret token and a generous rate (unless the test is about the rate). */
export async function sandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const s = await startSandbox({ port: 0, rpm: 60_000, token: SECRET, ...options });
  open.push(s);
  return s;
}

/** The CLI's environment for a sandbox (or any base URL) and a store inside `dir`. */
export function envFor(target: { baseUrl: string }, dir: string, token = SECRET): Record<string, string> {
  return { LEAD_API_BASE_URL: target.baseUrl, LEAD_API_TOKEN: token, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `condition` every few ms; throws with `what` after `timeoutMs`: long enough for a CLI to
 * start on a loaded machine (15 s was outlasted at a load average of 24), short of the test's own bound.
 */
export async function until(condition: () => boolean, what: string, timeoutMs = 45_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(3);
  }
}

/** SIGKILLs a child and checks it really died of it (and was not finished already). */
export async function sigkill(child: CliProcess): Promise<CliResult> {
  child.kill('SIGKILL');
  const result = await child.result;
  expect(result.signal, `the run ended before the kill (code ${result.code}): ${result.stderr}`).toBe('SIGKILL');
  return result;
}

/** The sandbox's answer for a raw email, as the CLI should report it. */
export function expectedEmail(raw: string, notFoundRate?: number) {
  return sandboxAnswer('lookup_email', normalizeSandboxKey('lookup_email', raw), notFoundRate === undefined ? {} : { notFoundRate });
}

/** Lookups of one operation the sandbox received (faulted ones included). */
export const lookupsSeen = (s: Sandbox, op = 'lookup_email') => s.stats.byOperation[op] ?? 0;

/** Every row of an enriched CSV answered exactly as the sandbox answers its email. */
export function expectRowsMatchSandbox(file: string, emailsInOrder: string[], options: { column?: string; notFoundRate?: number } = {}): void {
  const column = options.column ?? 'email';
  const rows = readCsvObjects(file);
  expect(rows.map((r) => r[column])).toEqual(emailsInOrder);
  const wrong: string[] = [];
  rows.forEach((row, i) => {
    const expected = expectedEmail(emailsInOrder[i]!, options.notFoundRate);
    const status = expected.kind === 'rejected' ? 'error' : expected.kind;
    const lead = expected.kind === 'found' ? expected.data.lead : undefined;
    if (row.lead_status !== status || row.lead_id !== (lead?.id ?? '') || row.lead_name !== (lead?.name ?? '')) {
      wrong.push(
        `row ${i + 1} ${emailsInOrder[i]}: got ${row.lead_status}/${row.lead_id}/${row.lead_name}, want ${status}/${lead?.id ?? ''}/${lead?.name ?? ''}`,
      );
    }
  });
  expect(wrong.slice(0, 10), `${wrong.length} rows differ from the sandbox's answers`).toEqual([]);
}

/** The keys charged more than once (the sandbox counts found answers per key). */
export function chargedTwice(...sandboxes: Sandbox[]): string[] {
  const total = new Map<string, number>();
  for (const s of sandboxes) for (const [key, n] of s.stats.charges) total.set(key, (total.get(key) ?? 0) + n);
  return [...total].filter(([, n]) => n > 1).map(([key, n]) => `${key} x${n}`);
}

/** An enriched CSV without lead_billing, which says how each answer was obtained and may differ. */
export function csvWithoutBilling(file: string): Array<Record<string, string>> {
  return readCsvObjects(file).map(({ lead_billing: _billing, ...rest }) => rest);
}

/** JSON Lines without lead_billing. */
export function jsonlWithoutBilling(file: string): unknown[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const { lead_billing: _billing, ...rest } = JSON.parse(line) as Record<string, unknown>;
      return rest;
    });
}

/** The keys a store file holds for one operation (read with the library, as `store stats` would). */
export function storedKeys(file: string, service: string, op: 'lookup_email', keys: string[]): Set<string> {
  const store = ResultStore.open({ path: file, readonly: true });
  try {
    return new Set(store.getMany(service, op, keys, Number.MAX_SAFE_INTEGER).keys());
  } finally {
    store.close();
  }
}

/** Every file under `dir`, recursively (the store, its -wal/-shm, outputs, partial files). */
export function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/**
 * The token appears in none of the texts and in no file under the directories (byte search, so
 * the SQLite store and its WAL are covered whatever their encoding).
 */
export function expectNoSecret(texts: Array<string | undefined>, dirs: string[] = [], token = SECRET): void {
  texts.forEach((text, i) => {
    expect(text ?? '', `text #${i} holds the token`).not.toContain(token);
  });
  const needles = [Buffer.from(token, 'utf8'), Buffer.from(token, 'utf16le')];
  for (const dir of dirs) {
    for (const file of filesUnder(dir)) {
      const bytes = fs.readFileSync(file);
      for (const needle of needles) expect(bytes.includes(needle), `${file} holds the token`).toBe(false);
    }
  }
}

/** stderr shows no stack trace and no "unexpected failure" (the CLI's crash line). */
export function expectNoCrash(result: CliResult): void {
  expect(result.timedOut, `timed out; stderr: ${result.stderr}`).toBe(false);
  expect(result.stderr).not.toMatch(/^\s+at .+\(.*:\d+:\d+\)|^\s+at .+:\d+:\d+$/m);
  expect(result.stderr).not.toMatch(/unexpected failure|Unhandled|UnhandledPromiseRejection|TypeError|RangeError|ReferenceError/);
}

export interface TinyServer {
  baseUrl: string;
  /** Requests by path (without the query). */
  hits: Map<string, number>;
  /** Authorization headers received (to prove what was sent, never printed). */
  close(): Promise<void>;
}

export type LookupHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * A server on 127.0.0.1, port 0, whose account operations answer properly (credits 100000,
 * reserve 0, 60000 RPM) and whose lookups are handled by `onLookup`, to misbehave at will.
 */
export async function tinyServer(onLookup: LookupHandler, account: { credits?: LookupHandler; limits?: LookupHandler } = {}): Promise<TinyServer> {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(pathname, (hits.get(pathname) ?? 0) + 1);
    const json = (body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (pathname === '/v2/account/credits') {
      if (account.credits) return account.credits(req, res);
      return json({
        status: 'success',
        data: { total_remaining_credits: 100_000, plan_remaining_credits: { bonus: 100_000 }, low_credit_balance_min_threshold: 0 },
      });
    }
    if (pathname === '/v2/account/limits') {
      if (account.limits) return account.limits(req, res);
      const reset = new Date(Date.now() + 60_000).toISOString();
      return json({
        status: 'success',
        data: {
          email_verify: {
            api_rate_limit: { total: '60000 RPM', remaining: '60000 RPM', next_limit_reset: reset },
            bulk_verify_concurrency_limit: { total: '5 parallel bulk jobs', remaining: '5 parallel bulk jobs' },
          },
        },
      });
    }
    onLookup(req, res);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const tiny: TinyServer = {
    baseUrl: `http://127.0.0.1:${port}/v2`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  open.push(tiny);
  return tiny;
}

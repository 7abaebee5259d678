// A stale answer is better than none (docs/cli-contract.md, "Every night, unattended"), piece by
// piece and in process: the look-up step turns a key it could not look up again into its stored
// answer billed `stale` (with why); the row keeps it and says why in the sidecar's words; the
// tally counts it apart; the exit status and --max-errors count a failed refresh as the error it
// is; the summary, -q and JSON Lines say it. A store in memory, no socket, no clock but a manual one.
import { describe, expect, it } from 'vitest';
import {
  ApiUnavailableError,
  BadRequestError,
  CoordinationLostError,
  DailyLimitError,
  InterruptedError,
  InvalidInputError,
  RequestRejectedError,
  RowError,
  ServerError,
} from '../../src/api/errors.js';
import { formatSummary, oneLineSummary } from '../../src/cli/summary-text.js';
import { needsAction, type FinishedRow } from '../../src/core/rows.js';
import { CreditGuard } from '../../src/lookup/credits.js';
import { Lookups } from '../../src/lookup/lookups.js';
import { API_UNAVAILABLE, BUDGET, refusedOutcome, type LookupOutcome } from '../../src/lookup/outcome.js';
import { exitStatusOf } from '../../src/run/exit-status.js';
import { ErrorBudget } from '../../src/run/error-budget.js';
import { lookedUp, RunMetrics } from '../../src/run/metrics.js';
import { rowError } from '../../src/run/row-error.js';
import { RunStop } from '../../src/run/run-stop.js';
import type { EnrichSummary } from '../../src/run/summary.js';
import { ResultStore } from '../../src/store/result-store.js';
import { jsonRow } from '../../src/write/json-row.js';

const DAY = 86_400_000;
const SERVICE = 'https://api.test/v2';
const NOW = Date.parse('2026-06-10T12:00:00Z');

/** A store holding `jane@` found and `gone@` not found 40 days ago, and `bad@` refused then. */
function lookupsOver(): { lookups: Lookups; store: ResultStore } {
  const store = ResultStore.open({ path: ':memory:', now: () => NOW });
  const old = NOW - 40 * DAY;
  store.put(SERVICE, 'lookup_email', 'jane@acme.test', { found: true, data: { lead: { name: 'Jane' } }, fetchedAt: old }, 'run-1');
  store.put(SERVICE, 'lookup_email', 'gone@acme.test', { found: false, data: { lead: {} }, fetchedAt: old }, 'run-1');
  store.put(SERVICE, 'lookup_email', 'bad@acme.test', { found: false, data: undefined, fetchedAt: old, refused: 'The API rejected the input' }, 'run-1');
  const lookups = new Lookups({
    store,
    service: SERVICE,
    runId: 'run-2',
    freshSince: NOW - 30 * DAY,
    refresh: false,
    send: () => Promise.reject(new Error('no request in these tests')),
    credits: new CreditGuard({ balance: 100, reserve: 0 }),
    stop: new RunStop(),
  });
  return { lookups, store };
}

describe('the look-up step: a key it could not look up again', () => {
  it('with a stored answer older than --max-age: that answer, billed stale, with why and its date', () => {
    const { lookups } = lookupsOver();
    const kept = lookups.orStale('lookup_email', 'jane@acme.test', BUDGET);
    expect(kept).toMatchObject({ kind: 'found', billing: 'stale', data: { lead: { name: 'Jane' } }, stale: { kind: 'skipped', code: 'budget' } });
    expect((kept as { stale: { message: string } }).stale.message).toBe(
      'not looked up: the next lookup could have spent more than --budget; written with the stored answer of 2026-05-01 (stale)',
    );
    expect(lookups.orStale('lookup_email', 'gone@acme.test', API_UNAVAILABLE)).toMatchObject({
      kind: 'not_found',
      billing: 'stale',
      stale: { code: 'api_unavailable' },
    });
    const failed: LookupOutcome = {
      kind: 'error',
      code: 'server_error',
      message: 'Server error 503',
      billing: 'none',
      failure: new ServerError('Server error 503', { status: 503 }),
    };
    expect(lookups.orStale('lookup_email', 'jane@acme.test', failed)).toMatchObject({
      billing: 'stale',
      stale: { kind: 'error', code: 'server_error', failure: { status: 503 } },
    });
  });

  it('nothing stored, a refusal stored, or the API refusing the key now: the outcome as it is', () => {
    const { lookups } = lookupsOver();
    expect(lookups.orStale('lookup_email', 'new@acme.test', BUDGET)).toBe(BUDGET);
    expect(lookups.orStale('lookup_email', 'bad@acme.test', BUDGET)).toBe(BUDGET);
    const refused = refusedOutcome('The API rejected the input: no');
    expect(lookups.orStale('lookup_email', 'jane@acme.test', refused)).toBe(refused);
  });

  it('an answer stored fresh meanwhile (another run on the store): that answer, not a stale one', () => {
    const { lookups, store } = lookupsOver();
    store.put(SERVICE, 'lookup_email', 'jane@acme.test', { found: true, data: { lead: { name: 'Jane B.' } }, fetchedAt: NOW - DAY }, 'run-3');
    expect(lookups.orStale('lookup_email', 'jane@acme.test', BUDGET)).toMatchObject({ kind: 'found', billing: 'cached', data: { lead: { name: 'Jane B.' } } });
  });
});

/** A row written with its stale answer, as batch-lookups.ts makes it. */
function staleRow(row: number, unrefreshed: 'error' | 'skipped', code: string): FinishedRow {
  return {
    row,
    cells: ['jane@acme.test'],
    status: 'found',
    billing: 'stale',
    data: { lead: { name: 'Jane' } as never },
    unrefreshed,
    errorCode: code,
    errorMessage: `${code}; written with the stored answer of 2026-05-01 (stale)`,
  };
}

describe('a stale row in the tally, the exit status and --max-errors', () => {
  it('is listed in the sidecar, counted apart by code, and not in errorCodes', () => {
    const metrics = new RunMetrics('email');
    const rows = [staleRow(1, 'skipped', 'budget'), staleRow(2, 'skipped', 'budget'), staleRow(3, 'error', 'server_error')];
    for (const row of rows) metrics.count(row);
    expect(rows.every(needsAction)).toBe(true);
    expect(needsAction({ status: 'found', errorCode: undefined, unrefreshed: undefined })).toBe(false);
    expect(metrics.stale).toEqual({ rows: 3, errors: 1, reasons: { budget: 2, server_error: 1 } });
    expect(metrics.status).toMatchObject({ found: 3, error: 0, skipped: 0 });
    expect(metrics.billing).toMatchObject({ stale: 3, none: 0 });
    expect(metrics.errorCodes).toEqual({});
    // A failed refresh was looked up; a refresh a stop prevented was not.
    expect(rows.map(lookedUp)).toEqual([false, false, true]);
  });

  it('a failed refresh is an error for the exit status (2) and for --max-errors', () => {
    const summary = { stoppedBy: undefined, status: { found: 3, not_found: 0, error: 0, skipped: 0 }, fileErrors: 0 };
    expect(exitStatusOf({ ...summary, stale: { rows: 3, errors: 0, reasons: { interrupted: 3 } } })).toBe(0);
    expect(exitStatusOf({ ...summary, stale: { rows: 3, errors: 1, reasons: { server_error: 1 } } })).toBe(2);
    expect(exitStatusOf({ ...summary, stoppedBy: 'budget', stale: { rows: 3, errors: 1, reasons: {} } })).toBe(3);
    const stop = new RunStop();
    const budget = new ErrorBudget({ count: 1 }, stop);
    budget.observe(staleRow(1, 'skipped', 'budget'));
    budget.observe(staleRow(2, 'error', 'server_error'));
    expect(stop.stoppedBy).toBeUndefined();
    budget.observe(staleRow(3, 'error', 'timeout'));
    expect(stop.stoppedBy).toBe('max_errors');
  });
});

describe('what a stale row says', () => {
  const summary = {
    rows: 30,
    status: { found: 22, not_found: 8, error: 0, skipped: 0 },
    billing: { charged: 9, free: 1, cached: 0, duplicate: 0, stale: 20, none: 0 },
    withBilling: {},
    errorCodes: {},
    skipReasons: {},
    stale: { rows: 20, errors: 0, reasons: { budget: 20 } },
    fileErrors: 0,
    errorsFile: '/data/in.enriched.errors.csv',
    stoppedBy: 'budget',
    budgets: [{ budget: '80', per: 'run', credits: 80, spent: 76, left: 4, stopped: true }],
    accountRead: true,
    credits: { before: 1000, after: 924, spent: 76, fell: 76, reserve: 0, exact: true },
    changed: { compared: 10, rows: 0, fields: {} },
    fillRates: {},
    filled: {},
    elapsedMs: 2000,
    lookupMs: 1500,
    rowsLookedUp: 10,
    endedAt: '2026-06-10T12:00:00.000Z',
    windowMs: 60_000,
    rpm: 600,
    requests: 10,
    retries: 0,
    rateLimited: 0,
    apiUnavailableMs: 0,
    invalidUtf8Cells: 0,
  } as unknown as EnrichSummary;

  it('-q: the stale rows in the one line', () => {
    expect(oneLineSummary(summary)).toBe(
      'stopped at --budget 80 (76 credits spent by this run): 30 rows (found 22, not found 8, errors 0, skipped 0; stale 20); stale: budget 20; see /data/in.enriched.errors.csv',
    );
  });

  it('the summary: counted beside the statuses and the billing, and a line of their own', () => {
    const text = formatSummary(summary);
    expect(text).toContain('Rows: 30 (found 22, not found 8, errors 0, skipped 0; stale 20)');
    expect(text).toContain('Billing: charged 9, free 1, cached 0, duplicate 0, stale 20, none 0');
    expect(text).toContain(
      'Stale: 20 rows written with their stored answers, older than --max-age, not refreshed (budget 20); the same command later refreshes them',
    );
    // No stale row: the lines as they always were.
    const none = formatSummary({ ...summary, stale: { rows: 0, errors: 0, reasons: {} }, billing: { ...summary.billing, stale: 0 } });
    expect(none).toContain('Billing: charged 9, free 1, cached 0, duplicate 0, none 0');
    expect(none).not.toMatch(/stale/i);
  });

  it('a JSON Lines row: `stale` with the code and message, not `error`', () => {
    const row = jsonRow(staleRow(4, 'skipped', 'api_unavailable'), ['email']);
    expect(row).toMatchObject({ lead_status: 'found', lead_billing: 'stale', lead: { name: 'Jane' }, stale: { code: 'api_unavailable' } });
    expect(row).not.toHaveProperty('error');
    expect(row).not.toHaveProperty('reason');
  });
});

describe("enrichRows' errors: the class docs/library.md lists for each code", () => {
  it('a code with a class of its own is that class; the others a RowError; the failure behind kept', () => {
    const cases: Array<[string, new (...args: never[]) => Error]> = [
      ['invalid_input', InvalidInputError],
      ['bad_request', BadRequestError],
      ['request_rejected', RequestRejectedError],
      ['daily_limit', DailyLimitError],
      ['api_unavailable', ApiUnavailableError],
      ['interrupted', InterruptedError],
      ['redis_unavailable', CoordinationLostError],
      ['server_error', ServerError],
      ['no_key', RowError],
      ['complete', RowError],
      ['budget', RowError],
      ['credit_reserve', RowError],
      ['max_errors', RowError],
    ];
    for (const [code, kind] of cases) {
      const error = rowError(code, `why: ${code}`, undefined);
      expect(error, code).toBeInstanceOf(kind);
      expect(error, code).toMatchObject({ code, message: `why: ${code}` });
    }
    // A stored refusal is a 400 all the same.
    expect(rowError('bad_request', 'no', undefined).status).toBe(400);
    // The failure of the same code, said in the row's words: its own class and fields.
    const failure = new ServerError('Server error 503', { status: 503, apiCode: 1099 });
    const said = rowError('server_error', 'MX of acme.test: Server error 503', failure);
    expect(said).toBeInstanceOf(ServerError);
    expect(said).toMatchObject({ status: 503, apiCode: 1099, message: 'MX of acme.test: Server error 503' });
    // A stop that cut a retry short: its code's class, the failure its cause (no status of its own).
    const cut = rowError('budget', 'not looked up (a try before the stop failed: Server error 503)', failure);
    expect(cut).toBeInstanceOf(RowError);
    expect(cut).toMatchObject({ status: undefined, cause: failure });
    // Another 4xx keeps the status the API gave.
    const rejected = rowError('request_rejected', 'HTTP 410', new BadRequestError('HTTP 410', [], { status: 410 }));
    expect(rejected).toMatchObject({ code: 'request_rejected', status: 410 });
  });
});

// A failure no later request can pass stops the run at its first row (src/lookup/lookups.ts, the
// error classes' policies in src/api/errors.ts): a rejected token, an operation the token may not
// use, a certificate this machine does not trust, a proxy that refuses, a store that cannot be
// written; the run ends with it (`fatal`) instead of a request per row. A server error is the
// row's alone, and the run goes on. In process: the look-up step with requests that fail as told.
import { describe, expect, it } from 'vitest';
import { ForbiddenError, ProxyError, ServerError, StoreFailedError, TlsError, UnauthorizedError, type LeadEnrichError } from '../../src/api/errors.js';
import { CreditGuard } from '../../src/lookup/credits.js';
import { Lookups } from '../../src/lookup/lookups.js';
import { RunStop } from '../../src/run/run-stop.js';
import { ResultStore } from '../../src/store/result-store.js';

async function firstRow(failure: LeadEnrichError) {
  const store = ResultStore.open({ path: ':memory:' });
  const stop = new RunStop();
  const reasons: string[] = [];
  stop.onStop((reason) => reasons.push(reason));
  const lookups = new Lookups({
    store,
    service: 'https://api.test/v2',
    runId: 'run-1',
    freshSince: 0,
    refresh: false,
    send: () => Promise.reject(failure),
    credits: new CreditGuard({ balance: 100, reserve: 0 }),
    stop,
  });
  try {
    const outcome = await lookups.resolve('lookup_email', 'ann@acme.test');
    return { outcome, stop, reasons };
  } finally {
    store.close();
  }
}

describe('a failure no later request can pass', () => {
  it.each([
    ['a rejected token', new UnauthorizedError('401', { status: 401 }), 'unauthorized'],
    ['an operation the token may not use', new ForbiddenError('403', { status: 403 }), 'forbidden'],
    ['a certificate not trusted', new TlsError('self-signed certificate'), 'failed'],
    ['a proxy that refuses', new ProxyError('407 from the proxy'), 'failed'],
    ['a store that cannot be written', new StoreFailedError('disk full'), 'failed'],
  ] as const)('%s stops the run at its first row, with it as the run’s failure', async (_what, failure, reason) => {
    const { outcome, stop, reasons } = await firstRow(failure);
    expect(outcome).toMatchObject({ kind: 'error', code: failure.code });
    expect(stop.lookupsStopped).toBe(true);
    expect(stop.fatal).toBe(failure);
    expect(reasons).toEqual([reason]);
  });

  it('a server error is the row’s alone: the run goes on', async () => {
    const { outcome, stop, reasons } = await firstRow(new ServerError('503', { status: 503 }));
    expect(outcome).toMatchObject({ kind: 'error', code: 'server_error' });
    expect(stop.lookupsStopped).toBe(false);
    expect(stop.fatal).toBeUndefined();
    expect(reasons).toEqual([]);
  });
});

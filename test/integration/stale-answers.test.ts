// A stale answer is better than none, in the library (docs/library.md): a row whose stored answer
// is older than `maxAge` and that the run cannot look up again comes with that answer, `billing:
// 'stale'`, and `stale` saying why (an error of the code's class); `error` stays for rows with no
// answer. In-process against the sandbox; the answers are made forty days old in the store file.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiUnavailableError, LeadError, RowError, ServerError } from '../../src/index.js';
import { enrichRows, type EnrichRowsOptions, type RowResult } from '../../src/run/enrich-rows.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { makeTempDir } from '../helpers/files.js';
import { openSqliteFile } from '../helpers/sqlite.js';

let s: Sandbox;
beforeAll(async () => {
  s = await startSandbox({ port: 0, rpm: 60_000, notFoundRate: 0.3 });
});
afterAll(() => s.close());

const ROWS = Array.from({ length: 12 }, (_, i) => ({ email: `stale.${i}@company${i % 4}.com` }));

async function results(options: EnrichRowsOptions): Promise<RowResult[]> {
  const out: RowResult[] = [];
  for await (const result of enrichRows(ROWS, options)) out.push(result);
  return out;
}

/** A store enriched once, then made forty days old. */
async function agedStore(): Promise<{ options: EnrichRowsOptions; before: RowResult[] }> {
  const store = path.join(makeTempDir(), 'stale.sqlite');
  const options: EnrichRowsOptions = { baseUrl: s.baseUrl, token: s.token, store };
  const before = await results(options);
  const db = openSqliteFile(store);
  db.run('UPDATE results SET fetched_at = fetched_at - ?', 40 * 86_400_000);
  db.close();
  return { options, before };
}

describe('enrichRows: a stored answer it could not refresh', () => {
  it('a budget that refreshes a few: the others come with their stored lead, billing stale, `stale` a RowError (budget)', async () => {
    const { options, before } = await agedStore();
    const after = await results({ ...options, budget: 24 });
    expect(after.map((r) => r.status)).toEqual(before.map((r) => r.status));
    expect(after.map((r) => r.lead)).toEqual(before.map((r) => r.lead));
    const stale = after.filter((r) => r.billing === 'stale');
    expect(stale.length).toBeGreaterThanOrEqual(ROWS.length - 3);
    for (const r of stale) {
      expect(r.error).toBeUndefined();
      expect(r.stale).toBeInstanceOf(RowError);
      expect(r.stale).toBeInstanceOf(LeadError);
      expect(r.stale).toMatchObject({
        code: 'budget',
        message: expect.stringMatching(/^not looked up: .*; written with the stored answer of \d{4}-\d\d-\d\d \(stale\)$/),
      });
    }
    for (const r of after.filter((x) => x.billing !== 'stale')) expect(r.stale).toBeUndefined();
  });

  it('the API down past the patience: every row stale, `stale` an ApiUnavailableError; 503s after every retry: a ServerError (503)', async () => {
    const { options, before } = await agedStore();
    s.setOutage({ kind: 'error503', scope: 'all' });
    try {
      const down = await results({ ...options, patience: '1s' });
      expect(down.map((r) => [r.status, r.billing, r.lead])).toEqual(before.map((r) => [r.status, 'stale', r.lead]));
      for (const r of down) expect(r.stale).toBeInstanceOf(ApiUnavailableError);
    } finally {
      s.setOutage(undefined);
    }
    // Few keys failing: not the API down (three keys), each row's retries fail.
    s.setOutage({ kind: 'error503' });
    try {
      const failing = [];
      for await (const r of enrichRows(ROWS.slice(0, 3), { ...options, retries: 0 })) failing.push(r);
      for (const r of failing) {
        expect(r.billing).toBe('stale');
        expect(r.stale).toBeInstanceOf(ServerError);
        expect(r.stale).toMatchObject({ code: 'server_error', status: 503 });
      }
    } finally {
      s.setOutage(undefined);
    }
  });
});

// A run judges its stored answers' ages once, as it begins (--max-age counts back from then for the
// whole run): an answer fresh when it began is never found stale a second later and looked up after
// all. The nightly job runs at the same minute every night, so the answers one night fetched turn
// `--max-age` old during the run of the night that many days later; a run whose first count had
// found nothing to look up, and so had not read the account, then looked them up with no balance
// and no reserve (the simulation's seed 2027, night 274: "stopped at the credit reserve" with 8,000
// credits). And a run that has not read the account still holds --min-credits once it does.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreditGuard } from '../../src/lookup/credits.js';
import { enrichRows, type RowResult } from '../../src/run/enrich-rows.js';
import { creditAccount } from '../../src/run/run-account.js';
import { RunStop } from '../../src/run/run-stop.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { makeTempDir } from '../helpers/files.js';
import { openSqliteFile } from '../helpers/sqlite.js';

let s: Sandbox;
beforeAll(async () => {
  s = await startSandbox({ port: 0, rpm: 60_000, notFoundRate: 0 });
});
afterAll(() => s.close());

const DAY = 86_400_000;
const lookupsSent = () => Object.entries(s.stats.byOperation).reduce((sum, [op, n]) => (op.startsWith('lookup') ? sum + n : sum), 0);

describe('--max-age judged as the run begins', () => {
  it('an answer fresh when the run began is used as stored when its row comes after its age passed --max-age', async () => {
    const store = path.join(makeTempDir(), 'ages.sqlite');
    const options = { baseUrl: s.baseUrl, token: s.token, store, maxAge: '1d' };
    for await (const _ of enrichRows([{ email: 'first@acme.com' }, { email: 'later@acme.com' }], options));
    // Both answers turn a day old 600 ms from now.
    const db = openSqliteFile(store);
    db.run('UPDATE results SET fetched_at = ?', Date.now() - DAY + 600);
    db.close();
    const before = lookupsSent();
    async function* rows() {
      yield { email: 'first@acme.com' };
      // The second row comes after its answer passed the day.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      yield { email: 'later@acme.com' };
    }
    const results: RowResult[] = [];
    for await (const result of enrichRows(rows(), options)) results.push(result);
    expect(results.map((r) => [r.status, r.billing])).toEqual([
      ['found', 'cached'],
      ['found', 'cached'],
    ]);
    expect(lookupsSent() - before).toBe(0);
  });
});

describe('a run that did not read the account', () => {
  it('sends nothing until a reading says the balance, and then holds --min-credits', async () => {
    const stop = new RunStop();
    const credits = await creditAccount(undefined, 200, undefined, stop, () => {});
    expect(credits).toBeInstanceOf(CreditGuard);
    expect(await credits.tryBegin('lookup_email')).toBeUndefined();
    await credits.reading(210);
    const first = await credits.tryBegin('lookup_email');
    const second = await credits.tryBegin('lookup_email');
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    // 210 - 4 - 4 held: a third worst case of 4 would leave 198, under the reserve of 200.
    expect(await credits.tryBegin('lookup_email')).toBeUndefined();
    expect(stop.lookupsStopped).toBe(false);
  });
});

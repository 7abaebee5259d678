// The billing words of the --with operations (mx_billing, whois_billing, company_billing), checked
// against what the balance shows: a run against the sandbox, with a price of its own for each
// operation so that every credit can be traced, spends exactly the credits its `charged` words
// add up to; an MX answer with no record and a Whois answer with no record are `free`, as the
// balance says (it does not move for them). The summary's words are the columns' words.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { readCsvObjects, writeCsv } from '../helpers/files.js';

const COSTS = { person: 4, company: 5, mx: 2, whois: 3 };

let open: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(open.map((s) => s.close()));
  open = [];
});

async function sandbox(): Promise<Sandbox> {
  const s = await startSandbox({ port: 0, rpm: 60_000, credits: 100_000, costs: COSTS, notFoundRate: 0 });
  open.push(s);
  return s;
}

/** People at companies with MX records, without (`nomx`), with nothing at all (`notfound`), and at a free mail provider. */
const PEOPLE = [
  'ann@acme.com',
  'bob@acme.com',
  'cy@globex.io',
  'dee@nomx-works.com',
  'eve@nomx-partners.de',
  'fay@notfound-corp.com',
  'gus@gmail.com',
  'hal@initech.org',
  'ivy@notfound-labs.net',
  'jo@nomx-works.com',
];

async function enrichWith(
  s: Sandbox,
  extras: string,
): Promise<{
  rows: Array<Record<string, string>>;
  summary: { withBilling: Record<string, Record<string, number>>; billing: Record<string, number>; credits: { spent: number } };
  spent: number;
}> {
  const dir = tempDir();
  const input = writeCsv(path.join(dir, 'people.csv'), [['email'], ...PEOPLE.map((p) => [p])]);
  const before = s.credits;
  const r = await runCli(['enrich', input, '--with', extras, '--json', '--quiet'], { env: { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: s.token } });
  expect(r.code, r.stderr).toBe(0);
  const rows = readCsvObjects(path.join(dir, 'people.enriched.csv'));
  expect(fs.existsSync(path.join(dir, 'people.enriched.csv'))).toBe(true);
  return { rows, summary: JSON.parse(r.stdout), spent: before - s.credits };
}

const count = (rows: Array<Record<string, string>>, column: string, word: string) => rows.filter((row) => row[column] === word).length;

describe('billing words of the --with operations, against the balance', () => {
  it('--with mx: an answer with no MX record is free (the balance does not move for it), a found one is charged', async () => {
    const s = await sandbox();
    const { rows, summary, spent } = await enrichWith(s, 'mx');
    // Each distinct domain is asked once: acme (x2), globex, nomx-works (x2), nomx-partners, notfound-corp, gmail, initech, notfound-labs.
    expect(rows.filter((row) => row.email!.startsWith('dee') || row.email!.startsWith('fay')).map((row) => row.mx_billing)).toEqual(['free', 'free']);
    expect(count(rows, 'mx_billing', 'charged')).toBe(4); // acme, globex, gmail, initech
    expect(count(rows, 'mx_billing', 'free')).toBe(4); // nomx-works, nomx-partners, notfound-corp, notfound-labs
    expect(count(rows, 'mx_billing', 'duplicate')).toBe(2);
    const people = count(rows, 'lead_billing', 'charged');
    expect(spent).toBe(people * COSTS.person + count(rows, 'mx_billing', 'charged') * COSTS.mx);
    expect(summary.credits.spent).toBe(spent);
  });

  it("--with mx,whois,company: every credit the balance lost is a `charged` word, and the summary counts the columns' words", async () => {
    const s = await sandbox();
    const { rows, summary, spent } = await enrichWith(s, 'mx,whois,company');
    const charged = (column: string) => count(rows, column, 'charged');
    expect(spent).toBe(
      charged('lead_billing') * COSTS.person +
        charged('mx_billing') * COSTS.mx +
        charged('whois_billing') * COSTS.whois +
        charged('company_billing') * COSTS.company,
    );
    expect(summary.credits.spent).toBe(spent);
    // A Whois record that is empty (the interface's miss) is free; the free mail provider's company is not looked up.
    expect(rows.find((row) => row.email === 'fay@notfound-corp.com')).toMatchObject({ whois_billing: 'free', mx_billing: 'free', company_billing: 'free' });
    expect(rows.find((row) => row.email === 'gus@gmail.com')).toMatchObject({ company_billing: 'none', company_status: 'skipped' });
    for (const [extra, column] of [
      ['mx', 'mx_billing'],
      ['whois', 'whois_billing'],
      ['company', 'company_billing'],
    ] as const) {
      for (const word of ['charged', 'free', 'cached', 'duplicate', 'none']) {
        expect(summary.withBilling[extra]![word], `${extra} ${word}`).toBe(count(rows, column, word));
      }
    }
  });
});

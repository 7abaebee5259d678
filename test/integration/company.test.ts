// --with company (cli-contract.md, "Company"): the company behind each row, by domain, once per
// distinct domain per run and through the store, never for a free mail provider's domain.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { companyDomainOf, isFreeMailDomain } from '../../src/plan/company-domain.js';
import { planRun } from '../../src/run/dry-run.js';
import { enrich } from '../../src/run/enrich.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';
import { makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';

const sandbox = sandboxesPerTest({ notFoundRate: 0 });

describe('free mail providers', () => {
  it('come from the maintained list, not from a list typed here', () => {
    for (const domain of ['gmail.com', 'outlook.com', 'yahoo.com', 'gmx.de', 'web.de', 'icloud.com', 'GMAIL.COM'])
      expect(isFreeMailDomain(domain), domain).toBe(true);
    for (const domain of ['acme.com', 'globex.io', 'example.de']) expect(isFreeMailDomain(domain), domain).toBe(false);
  });
});

describe('the company domain of a row', () => {
  const url = 'https://www.linkedin.com/in/jane';
  it("is the lead's company_domain, else the email's, else the domain column; never free mail", () => {
    expect(companyDomainOf({ kind: 'email', key: 'jane@acme.com', lead: { company_domain: 'Globex.io' }, domainCell: 'initech.com' })).toBe('globex.io');
    expect(companyDomainOf({ kind: 'email', key: 'jane@acme.com', lead: {}, domainCell: 'initech.com' })).toBe('acme.com');
    expect(companyDomainOf({ kind: 'email', key: 'jane@gmail.com', lead: { company_domain: 'gmail.com' }, domainCell: 'https://www.initech.com/about' })).toBe(
      'initech.com',
    );
    expect(companyDomainOf({ kind: 'email', key: 'jane@gmail.com', lead: undefined, domainCell: undefined })).toBeUndefined();
    expect(companyDomainOf({ kind: 'domain', key: 'acme.com', lead: undefined, domainCell: undefined })).toBe('acme.com');
  });

  it("of a waterfall row answered by its profile URL is still the email's when the lead names none", () => {
    expect(companyDomainOf({ kind: 'url', key: url, lead: {}, domainCell: undefined, emailKey: 'jane@acme.com' })).toBe('acme.com');
    expect(companyDomainOf({ kind: 'url', key: url, lead: {}, domainCell: undefined })).toBeUndefined();
  });
});

describe('--with company', () => {
  it('looks up each distinct company domain once, never a free mail domain, and adds the company columns', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['email', 'Website'],
      ['ann@acme.com', ''],
      ['bob@gmail.com', 'globex.io'], // free mail: the domain column names the company
      ['cy@outlook.com', ''], // free mail and nothing else: skipped
      ['dee@acme.com', ''], // same company as Ann: no second request
      ['broken@', 'initech.com'], // no lookup at all for a row whose key is malformed
    ]);
    const summary = await enrich({ input, baseUrl: s.baseUrl, token: s.token, store: ':memory:', with: ['company'] });
    // The sandbox's person leads name the email's domain as company_domain: acme.com, gmail.com
    // (free: passed over for the Website column), outlook.com (free).
    expect(s.stats.byOperation.lookup_domain).toBe(2);
    expect([...s.stats.charges.keys()].filter((k) => k.startsWith('lookup_domain:')).sort()).toEqual(['lookup_domain:acme.com', 'lookup_domain:globex.io']);
    const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
    expect(rows.map((r) => [r.lead_status, r.company_status, r.company_billing])).toEqual([
      ['found', 'found', 'charged'],
      ['found', 'found', 'charged'],
      ['found', 'skipped', 'none'],
      ['found', 'found', 'duplicate'],
      ['error', '', 'none'],
    ]);
    expect(rows[0]!.company_name).not.toBe('');
    expect(rows[0]!.company_name).toBe(rows[3]!.company_name);
    expect(Object.keys(rows[0]!)).toEqual(
      expect.arrayContaining([
        'company_status',
        'company_name',
        'company_network_url',
        'company_address',
        'company_country',
        'company_country_code',
        'company_id',
        'company_billing',
      ]),
    );
    // The rows looked up (the malformed one never was): two paid, one duplicate, one without a company domain.
    expect(summary.withBilling.company).toEqual({ charged: 2, free: 0, cached: 0, duplicate: 1, stale: 0, none: 1 });
  });

  it('a re-run takes the companies from the store: no request at all', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com'], ['bob@globex.io']]);
    const store = path.join(dir, 's.sqlite');
    await enrich({ input, baseUrl: s.baseUrl, token: s.token, store, with: ['company'] });
    const before = s.stats.requests;
    const again = await enrich({ input, baseUrl: s.baseUrl, token: s.token, store, with: ['company'], output: path.join(dir, 'again.csv') });
    expect(again.requests).toBe(0);
    expect(again.withBilling.company).toMatchObject({ cached: 2 });
    // Only the start-up account reads and the final balance reading.
    expect(s.stats.requests - before).toBeLessThanOrEqual(3);
  });

  it('the dry run of a waterfall counts the company of every key that may answer, and none the store knows', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['Name', 'Email', 'LinkedIn'],
      ['found by email', 'ann@acme.com', 'https://www.linkedin.com/in/ann-one'],
      ['url only', '', 'https://www.linkedin.com/in/cy-three'],
      ['free mail, not found: the url answers', 'bob.notfound@gmail.com', 'https://www.linkedin.com/in/bob-two'],
    ]);
    const store = path.join(dir, 's.sqlite');
    const options = { input, by: 'email,url', with: ['company' as const], baseUrl: s.baseUrl, token: s.token, store };
    const before = await planRun(options);
    // Worst: 2 emails + 3 URLs; companies: acme.com (ann's email) and one per URL, whose lead names
    // its own company. Expected: each row's first key and its company (bob's is free mail: none).
    expect(before).toMatchObject({ lookupsToMake: 9, lookupsExpected: 5 });
    await enrich({ ...options, output: path.join(dir, 'out.csv') });
    const sent = s.stats.requests;
    const after = await planRun(options);
    // The real run sent fewer than the worst case, and now the store answers every one of them,
    // companies of the leads found by URL included (their company_domain is read from the store).
    expect(after).toMatchObject({ lookupsToMake: 0, lookupsExpected: 0 });
    expect(s.stats.requests - sent).toBe(0); // no lookup to make: the dry run does not read the account either
  });

  it('the dry run counts one company lookup per distinct company domain', async () => {
    const s = await sandbox();
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com'], ['dee@acme.com'], ['bob@gmail.com']]);
    const plan = await planRun({ input, baseUrl: s.baseUrl, token: s.token, store: ':memory:', with: ['company'] });
    expect(plan.distinctKeys).toEqual({ lookup_email: 3, lookup_domain: 1 });
    expect(plan.lookupsToMake).toBe(4);
  });
});

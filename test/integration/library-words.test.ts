// The library speaks its own words (docs/library.md, "Errors"): a program that called
// enrich(), enrichRows() or LeadClient is told the option as it passed it (`token`, `baseUrl`,
// `by`, `column`, `store`), never the command line's flags or environment variables; every error
// is an instance of its documented class, whatever path threw it; a mistyped option gets the
// closest name. The command line's words for the same failures are the e2e tests' (cli-commands:
// LEAD_API_TOKEN; networks: --base-url; workbook-whole: --column; store: --store).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, ForbiddenError, LeadEnrichError, NetworkError, RateLimitedError, UnauthorizedError } from '../../src/api/errors.js';
import { isUnknownHost, networkFailure } from '../../src/api/network-errors.js';
import { restated } from '../../src/api/restated.js';
import { fatalOf } from '../../src/cli/fatal.js';
import { LeadClient } from '../../src/lookup/lead-client.js';
import { enrich } from '../../src/run/enrich.js';
import { enrichRows, type EnrichRowsOptions } from '../../src/run/enrich-rows.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { ResultStore } from '../../src/store/result-store.js';
import { makeTempDir, writeCsv } from '../helpers/files.js';

/** What the command line would say: none of it may reach a program. */
const CLI_WORDS = /--[a-z]|LEAD_API_|LEAD_ENRICH_|config file/;

let s: Sandbox;
let dir: string;
beforeAll(async () => {
  s = await startSandbox({ port: 0, rpm: 60_000 });
  dir = makeTempDir();
});
afterAll(() => s.close());

/** The first error of `promise`, which must fail. */
async function failure(promise: Promise<unknown>): Promise<LeadEnrichError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LeadEnrichError);
  return error as LeadEnrichError;
}

/** Every result of enrichRows over `rows`. */
async function results(rows: object[], options: EnrichRowsOptions) {
  const out = [];
  for await (const result of enrichRows(rows, { store: ':memory:', ...options })) out.push(result);
  return out;
}

const CONTACTS = [{ email: 'jane.doe@acme-robotics.com' }];

describe('the token and the base URL, as the program passed them', () => {
  it('no token: a ConfigError naming the token option', async () => {
    const error = await failure(results(CONTACTS, { baseUrl: s.baseUrl }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe('No usable API token: give the token option');
  });

  it('a rejected token: an UnauthorizedError naming the token option', async () => {
    const error = await failure(results(CONTACTS, { baseUrl: s.baseUrl, token: 'not-the-token-0123456789' }));
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error.message).toMatch(/^The API rejected the token \(401 .*\); give a valid token \(the token option\)$/);
  });

  it('no base URL: a ConfigError naming baseUrl', async () => {
    const error = await failure(results(CONTACTS, { token: s.token }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe("No API base URL: give baseUrl (the service's address, ending in /v2)");
  });

  it('a refused port: a NetworkError that says to check the port in baseUrl', async () => {
    const client = new LeadClient({ baseUrl: 'http://127.0.0.1:1/v2', token: s.token, retry: false });
    try {
      const error = await failure(client.lookupEmail('jane.doe@acme-robotics.com'));
      expect(error).toBeInstanceOf(NetworkError);
      expect(error.message).toMatch(
        /^Cannot reach 127\.0\.0\.1:1 \(\/reverse_lookup\/email\): connection refused \(ECONNREFUSED\); check the port in baseUrl, and that the server runs$/,
      );
    } finally {
      await client.close();
    }
  });
});

describe('the input options, as the program passed them', () => {
  const options = () => ({ baseUrl: s.baseUrl, token: s.token, store: ':memory:' });

  it('no key column: by and column, named as options', async () => {
    const input = writeCsv(path.join(dir, 'names.csv'), [
      ['name', 'phone'],
      ['Ann', '1'],
    ]);
    const error = await failure(enrich({ input, output: path.join(dir, 'names.out.csv'), ...options() }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      "No lookup column found in the header (name, phone): pass by: 'email', 'url' or 'domain' and column: the key column's name (or, when the header is not the first line, skipLines)",
    );
  });

  it('a column the rows lack, and a kind with no column: the option by its name', async () => {
    const missing = await failure(results(CONTACTS, { ...options(), column: 'mail' }));
    expect(missing.message).toBe("Invalid option column: no column named 'mail' in the header (email)");
    const noUrl = await failure(results(CONTACTS, { ...options(), by: 'url' }));
    expect(noUrl.message).toBe("No url column found in the header (email): pass column: the key column's name");
  });

  it('a key of the wrong kind: the row says which by to use', async () => {
    const [row] = await results([{ website: 'jane@acme.com' }], { ...options(), by: 'domain', column: 'website' });
    expect(row!.error?.message).toBe("website: looks like an email address; use by: 'email'");
  });

  it('an output over the input, and --fill words: the options as the program names them', async () => {
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
    expect((await failure(enrich({ input, output: input, ...options() }))).message).toMatch(/^output would overwrite the input/);
    expect((await failure(enrich({ input, overwrite: true, ...options() }))).message).toBe(
      'Invalid option overwrite: it replaces the cells fill fills; give fill too',
    );
    const fields = await failure(enrich({ input, output: path.join(dir, 'f.csv'), fields: 'whois_registrar', ...options() }));
    expect(fields.message).toMatch(/^Invalid option fields: this run adds no column named 'whois_registrar': add 'whois' to with;/);
  });

  it('a warning about the key column names the options too', async () => {
    const input = writeCsv(path.join(dir, 'bad-keys.csv'), [['email'], ['not an email'], ['still not']]);
    const warnings: string[] = [];
    await enrich({ input, output: path.join(dir, 'bad-keys.out.csv'), ...options(), onWarning: (line) => warnings.push(line) });
    expect(warnings.join('\n')).toMatch(/\(give column, by or delimiter\)/);
    expect(warnings.join('\n')).not.toMatch(CLI_WORDS);
  });
});

describe('the store, as the program gives it', () => {
  it('a path it cannot use, a folder: a ConfigError that says to give another path', async () => {
    fs.writeFileSync(path.join(dir, 'a-file'), 'x');
    const notADir = await failure(results(CONTACTS, { baseUrl: s.baseUrl, token: s.token, store: path.join(dir, 'a-file', 'store.sqlite') }));
    expect(notADir).toBeInstanceOf(ConfigError);
    expect(notADir.message).toMatch(/: a part of the path is a file, not a directory; check the path, or give another store path \(or ':memory:'\)$/);
    expect(() => ResultStore.open({ path: dir })).toThrow(
      `Cannot open the result store at ${dir}: it is a directory; give a file inside it ('${path.join(dir, 'results.sqlite')}')`,
    );
  });
});

describe('a mistyped option', () => {
  const options = () => ({ baseUrl: s.baseUrl, token: s.token, store: ':memory:' });

  it('of enrichRows gets the closest name, before any row is read', () => {
    expect(() => enrichRows(CONTACTS, { ...options(), rmp: 5 } as never)).toThrow(
      new ConfigError('Invalid option rmp: not an option of enrichRows (see EnrichRowsOptions); did you mean rpm?'),
    );
    expect(() => enrichRows(CONTACTS, { ...options(), colum: 'email' } as never)).toThrow(/did you mean column\?$/);
  });

  it('of enrich gets the closest name too; a name close to nothing gets none', async () => {
    const input = writeCsv(path.join(dir, 'typo.csv'), [['email'], ['ann@acme.com']]);
    expect((await failure(enrich({ input, ...options(), maxErorrs: 3 } as never))).message).toBe(
      'Invalid option maxErorrs: not an option of enrich (see EnrichOptions); did you mean maxErrors?',
    );
    expect((await failure(enrich({ input, ...options(), zzzzzzzz: 1 } as never))).message).toBe(
      'Invalid option zzzzzzzz: not an option of enrich (see EnrichOptions)',
    );
  });
});

describe('every error is of its documented class, whatever path threw it', () => {
  it('a 403 on the account read before the run: a ForbiddenError (said with what was being done)', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'failed', error: { code: 1008, message: 'Forbidden' } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/v2`;
      const error = await failure(results(CONTACTS, { baseUrl, token: s.token, retries: 0 }));
      expect(error).toBeInstanceOf(ForbiddenError);
      expect(error).toMatchObject({ code: 'forbidden', status: 403, apiCode: 1008 });
      expect(error.message).toMatch(/^Cannot read the account before starting: The API refused the operation/);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('an error said again keeps its class, its code and its own fields', () => {
    const retryAt = new Date('2026-11-23T10:00:00Z');
    const again = restated(
      new RateLimitedError('Rate limited (429)', retryAt, { status: 429, apiCode: 1030 }),
      'Cannot read the account before starting: Rate limited (429)',
    );
    expect(again).toBeInstanceOf(RateLimitedError);
    expect(again).toBeInstanceOf(Error);
    expect(again).toMatchObject({
      name: 'RateLimitedError',
      code: 'rate_limited',
      status: 429,
      apiCode: 1030,
      retryAt,
      message: 'Cannot read the account before starting: Rate limited (429)',
    });
    expect(again.cause).toBeUndefined();
  });

  it('an error said again keeps what its cause says: a host that does not exist is still one, and the command line exits 1 for it (an outage would be 2)', () => {
    const system = Object.assign(new Error('getaddrinfo ENOTFOUND lead-api.invalid'), { code: 'ENOTFOUND' });
    const failure = networkFailure({ code: 'ENOTFOUND' }, { host: 'lead-api.invalid', port: 443, path: '/account/credits' }, undefined, system);
    const again = restated(failure, `Cannot read the account before starting: ${failure.message}`);
    expect(again).toBeInstanceOf(NetworkError);
    expect(again.cause).toBe(system);
    expect(isUnknownHost(again)).toBe(true);
    expect(fatalOf(again, () => false)).toMatchObject({ status: 1, code: 'network' });
    // EAI_AGAIN may pass by waiting: the API taken as down, 2.
    const later = networkFailure(
      { code: 'EAI_AGAIN' },
      { host: 'lead-api.invalid', port: 443, path: '/account/credits' },
      undefined,
      Object.assign(new Error('x'), { code: 'EAI_AGAIN' }),
    );
    expect(fatalOf(restated(later, `Cannot read the account before starting: ${later.message}`), () => false)).toMatchObject({ status: 2, code: 'network' });
  });
});

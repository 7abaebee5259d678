// The command line speaks its own words: the same failures a program is told in its
// options' names (test/integration/library-words.test.ts) are told to the command line's user in
// flags and environment variables, on stderr and in the sidecar.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { readCsvObjects } from '../helpers/files.js';
import { accountOnlyServer } from '../helpers/servers.js';

const closers: Array<() => void> = [];
afterAll(() =>
  closers.forEach((close) => {
    close();
  }),
);

describe("the command line's words", () => {
  it('no key column: --by and --column, as flags', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'names.csv'), 'name,phone\nAnn,1\n');
    const r = await runCli(['enrich', 'names.csv', '--sandbox'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'lead-enrich: No lookup column found in the header (name, phone): pass --by email|url|domain and --column NAME (or, when the header is not the first line, --skip-lines N) (code: config)\n',
    );
  });

  it('a run stopped at --max-errors: the sidecar names the flag', async () => {
    // Every lookup answers a body the interface does not allow: an error of the API's, each row.
    const api = await accountOnlyServer(() => ({ status: 200, body: JSON.stringify({ status: 'success', data: { email_address: 'x', lead: 'nobody' } }) }));
    closers.push(api.close);
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'in.csv'), `email\n${Array.from({ length: 20 }, (_, i) => `p${i}@dead.example`).join('\n')}\n`);
    const r = await runCli(['enrich', 'in.csv', '--max-errors', '1', '--retries', '0', '--concurrency', '1'], {
      cwd: dir,
      env: { LEAD_API_BASE_URL: api.baseUrl, LEAD_API_TOKEN: 'a-token-of-the-right-length-0123456789' },
    });
    expect(r.code, r.stderr).toBe(4);
    const skipped = readCsvObjects(path.join(dir, 'in.enriched.errors.csv')).filter((row) => row.error_code === 'max_errors');
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped.at(-1)!.error_message).toBe('not looked up: the run stopped at --max-errors');
  });
});

// Scenario 7, secrets and safety. Every other file of this suite runs with the distinctive SECRET
// token and checks stdout, stderr, the outputs, the sidecar and the store for it; here: servers
// that echo the token back in every kind of error (with LEAD_ENRICH_DEBUG=1), the store's WAL left
// behind by a kill, a world-readable config file holding the token, base URLs that would send the
// token in clear or to a stranger, redirects, and formula injection through added cells.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lines, runCli, spawnCli } from '../../helpers/cli.js';
import { emails, makeTempDir, readCsvBytes, readCsvObjects, writeCsv } from '../../helpers/files.js';
import { closeAll, envFor, expectNoCrash, expectNoSecret, lookupsSeen, sandbox, SECRET, sigkill, tinyServer, until, type LookupHandler } from './support.js';
import { hangBound } from '../../helpers/processes.js';

afterAll(closeAll);

/** Answers with `status` and a body whose every text field carries the Authorization header. */
function echo(status: number, shape: 'error' | 'reasons' | 'html' = 'error'): LookupHandler {
  return (req, res) => {
    const auth = req.headers.authorization ?? '';
    const text = `denied for ${auth}; token=${auth.replace(/^Bearer /, '')}`;
    const body =
      shape === 'html'
        ? `<html><body>${text}</body></html>`
        : JSON.stringify({
            status: 'failed',
            error:
              shape === 'reasons'
                ? { message: text, reasons: [{ field: ['email'], location: 'query', messages: [text, `"email" ${text}`], types: [text] }] }
                : { code: status === 402 ? 1002 : status === 401 ? 1000 : 1099, message: text, additional_info: { auth } },
          });
    res.writeHead(status, { 'content-type': shape === 'html' ? 'text/html' : 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
}

describe.concurrent('the token never shows', () => {
  // [what the server sends, handler, exit status, what the kept message shows instead of the token]
  const echoes: Array<[string, LookupHandler, number, RegExp]> = [
    // A key the API refuses (400) is the file's own problem: exit 5.
    ['400 with the token in the message and the reasons', echo(400, 'reasons'), 5, /denied for Bearer \*\*\*; token=\*\*\*/],
    ['500 with the token in the message', echo(500), 2, /denied for Bearer \*\*\*; token=\*\*\*/],
    ['"failed" at 200 with the token in the message', echo(200), 2, /denied for Bearer \*\*\*; token=\*\*\*/],
    ['402 with the token in the message', echo(402), 3, /denied for Bearer \*\*\*; token=\*\*\*|credit/],
    // A 404 on a lookup once the account answered is "not found", with no message kept: another 4xx is refused with its words.
    ['422 with the token in the message', echo(422), 2, /denied for Bearer \*\*\*; token=\*\*\*/],
    ['502 HTML page holding the token', echo(502, 'html'), 2, /non-JSON body/],
    ['401 with the token in the message', echo(401), 1, /denied for Bearer \*\*\*; token=\*\*\*/],
  ];
  it.concurrent.each(echoes)(
    'a server echoing it back: %s, in CSV and JSON Lines, with LEAD_ENRICH_DEBUG=1',
    async (_name, handler, status, shown) => {
      const server = await tinyServer(handler);
      for (const format of ['csv', 'jsonl']) {
        const dir = makeTempDir();
        const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com'], ['ben@acme.com']]);
        const result = await runCli(['enrich', input, '--format', format, '--retries', '1', '--json'], {
          env: { ...envFor(server, dir), LEAD_ENRICH_DEBUG: '1' },
          timeoutMs: 30_000,
        });
        expectNoCrash(result);
        expect(result.code, result.stderr).toBe(status);
        expectNoSecret([result.stdout, result.stderr], [dir]);
        // The server's message is kept (it helps), with the token masked.
        if (status === 1) {
          expect(lines(result.stderr)).toHaveLength(1);
          expect(result.stderr).toMatch(shown);
        } else {
          const sidecar = readCsvObjects(path.join(dir, `in.enriched.errors.csv`));
          expect(sidecar).toHaveLength(2);
          expect(sidecar[0]!.error_message).toMatch(shown);
        }
      }
    },
    hangBound(40_000),
  );

  it(
    'in the store and its write-ahead log, left behind by kill -9 in the middle of a run',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(60, 'wal').map((e) => [e])]);
      const env = envFor(s, dir);
      const child = spawnCli(['enrich', input, '--rpm', '900'], { env });
      child.stdin!.end();
      await until(() => lookupsSeen(s) >= 30, '30 lookups');
      await new Promise((r) => setTimeout(r, 300)); // past a store commit
      await sigkill(child);
      const wal = `${env.LEAD_ENRICH_STORE}-wal`;
      expect(fs.existsSync(wal) && fs.statSync(wal).size > 0).toBe(true);
      expect(fs.readFileSync(wal).includes(Buffer.from('wal.1@company1.com'))).toBe(true); // the WAL does hold answers
      expectNoSecret([child.output.stdout, child.output.stderr], [dir]);
    },
    hangBound(30_000),
  );
});

describe.concurrent('configuration', () => {
  // Not on Windows: it has no POSIX permission bits, so "readable by others" and chmod do not apply.
  it.runIf(process.platform !== 'win32')(
    'a world-readable config file holding the token draws a warning with the chmod to run; at 0600 none',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
      const config = path.join(makeTempDir(), 'lead-enrich.json'); // holds the token: kept apart from `dir`
      fs.writeFileSync(config, JSON.stringify({ baseUrl: s.baseUrl, token: SECRET }));
      const env = { LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') };
      fs.chmodSync(config, 0o644);
      const open = await runCli(['enrich', input, '--config', config, '--quiet'], { env });
      expect(open.code, open.stderr).toBe(0);
      expect(lines(open.stderr)).toHaveLength(1);
      expect(open.stderr).toMatch(/readable by other users.*chmod 600/);
      expect(open.stderr).toContain(config);
      fs.chmodSync(config, 0o600);
      const closed = await runCli(['enrich', input, '--config', config, '--quiet'], { env });
      expect(closed.code, closed.stderr).toBe(0);
      expect(closed.stderr).toBe('');
      expectNoSecret([open.stdout, open.stderr, closed.stdout, closed.stderr], [dir]);
    },
    hangBound(30_000),
  );

  it.each([
    [
      '--base-url http://example.com/v2',
      (dir: string) => ({ args: ['--base-url', 'http://example.com/v2'], env: { LEAD_API_TOKEN: SECRET, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') } }),
      /Refusing plain http to example\.com/,
    ],
    [
      'LEAD_API_BASE_URL=http://example.com/v2',
      (dir: string) => ({
        args: [],
        env: { LEAD_API_BASE_URL: 'http://example.com/v2', LEAD_API_TOKEN: SECRET, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') },
      }),
      /Refusing plain http/,
    ],
    [
      'a look-alike of localhost',
      (dir: string) => ({
        args: ['--base-url', 'http://localhost.example.com/v2'],
        env: { LEAD_API_TOKEN: SECRET, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') },
      }),
      /Refusing plain http/,
    ],
    [
      'a look-alike of 127.0.0.1',
      (dir: string) => ({
        args: ['--base-url', 'http://127.0.0.1.example.com/v2'],
        env: { LEAD_API_TOKEN: SECRET, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') },
      }),
      /Refusing plain http/,
    ],
    [
      'the token pasted into the URL',
      (dir: string) => ({
        args: ['--base-url', `https://user:${SECRET}@lead-api.example/v2`],
        env: { LEAD_API_TOKEN: SECRET, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') },
      }),
      /must not contain credentials/,
    ],
    [
      'a config file baseUrl over plain http',
      (dir: string) => {
        const config = path.join(makeTempDir(), 'c.json'); // beside its token file, apart from `dir`
        fs.writeFileSync(config, JSON.stringify({ baseUrl: 'http://example.com/v2', tokenFile: 'token.txt' }));
        fs.writeFileSync(path.join(path.dirname(config), 'token.txt'), SECRET, { mode: 0o600 });
        return { args: ['--config', config], env: { LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') } };
      },
      /Refusing plain http/,
    ],
  ])(
    '%s is refused before any request: exit 1, one line, no output',
    async (_name, setup, message) => {
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
      const { args, env } = setup(dir);
      const result = await runCli(['enrich', input, ...args], { env });
      expectNoCrash(result);
      expect(result.code).toBe(1);
      expect(lines(result.stderr), result.stderr).toHaveLength(1);
      expect(result.stderr).toMatch(message);
      expect(fs.readdirSync(dir).filter((f) => f.includes('enriched') || f.endsWith('.partial'))).toEqual([]);
      expectNoSecret([result.stdout, result.stderr], [dir]);
    },
    hangBound(30_000),
  );

  it(
    'a redirect is not followed: the token is never sent to the other host',
    async () => {
      const stranger = await tinyServer((_req, res) => res.end('{}'));
      const server = await tinyServer((_req, res) => {
        res.writeHead(302, { location: `${stranger.baseUrl}/reverse_lookup/email?email_address=x` });
        res.end();
      });
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
      const result = await runCli(['enrich', input, '--json'], { env: envFor(server, dir) });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(2); // the API refused the request (a 302), not the key
      expect(stranger.hits.size).toBe(0);
      expect(readCsvObjects(path.join(dir, 'in.enriched.errors.csv'))[0]!.error_code).toBe('request_rejected');
      expectNoSecret([result.stdout, result.stderr], [dir]);
    },
    hangBound(30_000),
  );
});

describe.concurrent('formula injection', () => {
  it(
    'added cells that a spreadsheet would run are escaped with a quote; input cells and JSON Lines stay as they are',
    async () => {
      const lead = {
        name: '=HYPERLINK("http://evil.example","click")',
        title: "+1+cmd|' /C calc'!A0",
        company_name: '-2+3',
        company_domain: '@SUM(A1)',
        network_url: '\t=1',
        contructed_title: '\r=2',
        addresses: [{ full_address: '=A1', city: 'ok', country: '=B2' }],
      };
      const server = await tinyServer((req, res) => {
        const email = new URL(req.url!, 'http://x').searchParams.get('email_address');
        const body = JSON.stringify({ status: 'success', data: { email_address: email, lead } });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
      const dir = makeTempDir();
      // The key column's name itself starts with "=": it is an input cell, and it shows up at the
      // start of the sidecar's error_message for an invalid key, which must be escaped there.
      const input = writeCsv(path.join(dir, 'in.csv'), [
        ['=Email', 'note'],
        ['ann@acme.com', '=1+1'],
        ['ben@acme.com', '@cmd'],
        ['not an email', '+x'],
      ]);
      const result = await runCli(['enrich', input, '--quiet'], { env: envFor(server, dir) });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(5); // the one malformed key: the file's own problem
      const out = readCsvBytes(path.join(dir, 'in.enriched.csv'));
      const header = out[0]!;
      expect(header.slice(0, 2)).toEqual(['=Email', 'note']);
      const cell = (row: string[], name: string) => row[header.indexOf(name)];
      for (const row of out.slice(1, 3)) {
        expect(cell(row, 'lead_name')).toBe(`'${lead.name}`);
        expect(cell(row, 'lead_title')).toBe(`'${lead.title}`);
        expect(cell(row, 'lead_company_name')).toBe(`'${lead.company_name}`);
        expect(cell(row, 'lead_company_domain')).toBe(`'${lead.company_domain}`);
        expect(cell(row, 'lead_network_url')).toBe(`'${lead.network_url}`);
        expect(cell(row, 'lead_constructed_title')).toBe(`'${lead.contructed_title}`);
        expect(cell(row, 'lead_location')).toBe("'=A1");
        expect(cell(row, 'lead_country')).toBe("'=B2");
        expect(cell(row, 'lead_city')).toBe('ok');
      }
      // Input cells untouched, whatever they start with.
      expect(out.slice(1).map((r) => r.slice(0, 2))).toEqual([
        ['ann@acme.com', '=1+1'],
        ['ben@acme.com', '@cmd'],
        ['not an email', '+x'],
      ]);
      const sidecar = readCsvBytes(path.join(dir, 'in.enriched.errors.csv'));
      expect(sidecar[0]).toEqual(['row', '=Email', 'note', 'error_code', 'error_message']);
      expect(sidecar[1]!.slice(0, 4)).toEqual(['3', 'not an email', '+x', 'invalid_input']);
      expect(sidecar[1]![4]).toMatch(/^'=Email: /);

      // JSON Lines is not a spreadsheet: the values are exactly as the API sent them.
      const jsonl = await runCli(['enrich', input, '--format', 'jsonl', '--quiet'], { env: envFor(server, dir) });
      expect(jsonl.code, jsonl.stderr).toBe(5);
      const first = JSON.parse(fs.readFileSync(path.join(dir, 'in.enriched.jsonl'), 'utf8').split('\n')[0]!);
      expect(first.lead).toEqual(lead);
      expect(first.input).toEqual({ '=Email': 'ann@acme.com', note: '=1+1' });
    },
    hangBound(30_000),
  );
});

// Where the token or a password could leave this machine or show where it should not: plain http
// through a proxy, a token file others can read, a Redis password typed on the command line.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canProxy, proxySetup } from '../../src/api/proxy.js';
import { lines, runCli } from '../helpers/cli.js';
import { makeTempDir, writeCsv } from '../helpers/files.js';
import { expectNoCrash, expectNoSecret, SECRET } from './reliability/support.js';
import { hangBound } from '../helpers/processes.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = makeTempDir();
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A plain http proxy on 127.0.0.1 that answers 502 to everything and counts what it was sent. */
async function loopbackProxy(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(502).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
  };
}

// Skipped only on a Node whose agents cannot use a proxy (before 22.21 / 24.5): a proxy is then
// refused whatever the base URL (networks.test.ts). CI's Node 22, 24 and 26 run it.
describe.skipIf(!canProxy())(
  'plain http through a proxy',
  { meta: { skipReason: `Node ${process.version} cannot tunnel through a proxy (22.21 / 24.5 and later can)` } },
  () => {
    const base = 'http://127.0.0.2:1/v2';

    it('a loopback http base URL through a proxy elsewhere is refused (the token would reach the proxy in clear), as plain http elsewhere is', () => {
      const refused =
        /^Refusing plain http to 127\.0\.0\.2 through the proxy http:\/\/u@proxy\.example:3128 \((http_proxy|the config file's "proxy")\): the token would travel unencrypted to the proxy; use an https:\/\/ base URL, or name 127\.0\.0\.2 in NO_PROXY$/;
      expect(() => proxySetup(base, undefined, { http_proxy: 'http://u:pw@proxy.example:3128' })).toThrow(refused);
      expect(() => proxySetup(base, 'http://u:pw@proxy.example:3128', {})).toThrow(refused);
      // A NO_PROXY pattern Node might or might not apply does not count; the exact host, or *, does.
      expect(() => proxySetup(base, undefined, { http_proxy: 'http://proxy.example:3128', NO_PROXY: '.0.0.2,127.0.0.0/8' })).toThrow(/Refusing plain http/);
      expect(proxySetup(base, undefined, { http_proxy: 'http://proxy.example:3128', NO_PROXY: 'corp.example,127.0.0.2' }).proxy?.from).toBe('http_proxy');
      expect(proxySetup(base, undefined, { http_proxy: 'http://proxy.example:3128', no_proxy: '*' }).proxy?.from).toBe('http_proxy');
      // The hosts that always bypass the proxy, a proxy on this machine, and https (a tunnel) are fine.
      for (const own of ['http://localhost:1/v2', 'http://127.0.0.1:1/v2', 'http://[::1]:1/v2']) {
        expect(proxySetup(own, undefined, { http_proxy: 'http://proxy.example:3128' }).proxy?.from).toBe('http_proxy');
      }
      expect(proxySetup(base, undefined, { http_proxy: 'http://127.0.0.1:3128' }).proxy?.from).toBe('http_proxy');
      expect(proxySetup('https://api.example.com/v2', undefined, { https_proxy: 'http://proxy.example:3128' }).proxy?.from).toBe('https_proxy');
    });

    it(
      'through the CLI: exit 1 in one line before any request, no password shown; a proxy on this machine is used',
      async () => {
        const dir = tempDir();
        const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
        const env = { LEAD_API_BASE_URL: base, LEAD_API_TOKEN: SECRET, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') };
        const refused = await runCli(['enrich', input], { env: { ...env, http_proxy: 'http://u:Pa55-proxy@proxy.example:3128' } });
        expectNoCrash(refused);
        expect(refused.code).toBe(1);
        expect(lines(refused.stderr)).toEqual([
          'lead-enrich: Refusing plain http to 127.0.0.2 through the proxy http://u@proxy.example:3128 (http_proxy): the token would travel unencrypted to the proxy; use an https:// base URL, or name 127.0.0.2 in NO_PROXY (code: config)',
        ]);
        expect(fs.readdirSync(dir).filter((f) => f.includes('enriched'))).toEqual([]);

        const proxy = await loopbackProxy();
        try {
          // The proxy answers 502 to the first account read: the API down, waited for, then exit 2.
          const local = await runCli(['enrich', input, '--retries', '0', '--patience', '1s'], { env: { ...env, http_proxy: proxy.url } });
          expect(local.code, local.stderr).toBe(2);
          expect(proxy.seen.length).toBeGreaterThan(0);
          expect(new Set(proxy.seen)).toEqual(new Set(['http://127.0.0.2:1/v2/account/credits']));
          expectNoSecret([refused.stdout, refused.stderr, local.stdout, local.stderr], [dir]);
          expect(refused.stderr).not.toContain('Pa55-proxy');
        } finally {
          await proxy.close();
        }
      },
      hangBound(30_000),
    );
  },
);

describe('a Redis password on the command line', () => {
  const PASSWORD = 'S3cret-redis-pw';
  // Port 1 on this machine: nothing listens, so the run ends at its first Redis connection, in one line.
  const url = (password = PASSWORD) => `redis://:${password}@127.0.0.1:1`;
  const warning =
    'lead-enrich: --redis holds a password, which other users of this machine can see in the process list; set the URL in LEAD_ENRICH_REDIS or the config file\'s "redis" instead';

  it(
    '--redis with a password warns in one line and never shows it; from LEAD_ENRICH_REDIS, or without a password, no warning',
    async () => {
      const dir = tempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
      const env = { LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') };
      const typed = await runCli(['enrich', input, '--sandbox', '--redis', url()], { env });
      expectNoCrash(typed);
      expect(typed.code).toBe(1);
      // A notice like every other: stamped (no terminal here) and prefixed.
      expect(lines(typed.stderr).map((line) => line.replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z /, ''))).toEqual([
        warning,
        'lead-enrich: Cannot reach Redis at redis://:***@127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1; start it, fix --redis / LEAD_ENRICH_REDIS, or drop --redis to run alone (code: config)',
      ]);

      const fromEnv = await runCli(['enrich', input, '--sandbox'], { env: { ...env, LEAD_ENRICH_REDIS: url() } });
      expect(fromEnv.code).toBe(1);
      expect(fromEnv.stderr).not.toContain('Warning');
      const noPassword = await runCli(['enrich', input, '--sandbox', '--redis', 'redis://worker@127.0.0.1:1'], { env });
      expect(noPassword.code).toBe(1);
      expect(noPassword.stderr).not.toContain('Warning');
      for (const result of [typed, fromEnv, noPassword]) expect(result.stdout + result.stderr).not.toContain(PASSWORD);
    },
    hangBound(30_000),
  );
});

// The command line as users and scripts see it (cli-contract.md): the built dist/cli/main.js run
// as a subprocess against sandboxes on 127.0.0.1 port 0. Every fatal error must be ONE line on
// stderr, with no stack trace, that says what to do; the token must never appear in any output.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startSandbox, type FaultKind, type Sandbox } from '../../src/sandbox/server.js';
import { lines, REPO_ROOT, runCli, spawnCli, tempDir, waitForOutput, type CliResult } from '../helpers/cli.js';

// Each subprocess costs ~0.35 s of CPU (mostly loading got and yargs); several run at once, and
// other test files compete for the same cores under `npm test`.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });

const SECRET = 'tok-SECRET-zq81xv';
const WRONG = 'tok-WRONG-p3k9mm';

const FOUND_EMAIL = 'john.smith@bigcorp.com'; // found in the sandbox data (not in the not-found bucket)
const FOUND_URL = 'https://www.linkedin.com/in/jane-doe';
const FOUND_DOMAIN = 'acme.com';

let sb: Sandbox;
const sandboxes: Sandbox[] = [];
const dirs: string[] = [];

async function sandbox(options: Parameters<typeof startSandbox>[0] = {}): Promise<Sandbox> {
  const s = await startSandbox({ host: '127.0.0.1', port: 0, token: SECRET, ...options });
  sandboxes.push(s);
  return s;
}

/** The environment that targets sandbox `s` (the main one by default). */
function envFor(s: Sandbox = sb, token: string = s.token): Record<string, string> {
  return { LEAD_API_BASE_URL: s.baseUrl, LEAD_API_TOKEN: token };
}

function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

beforeAll(async () => {
  sb = await sandbox();
});

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A fatal error as the contract wants it: exit 1, one line on stderr, no stack, nothing on stdout. */
function expectOneLineError(r: CliResult, ...mentions: RegExp[]): string {
  return expectOneLineFailure(r, 1, ...mentions);
}

/** Exit `status` (1: what waiting cannot mend; 2: an API that is down) with one line and no token. */
function expectOneLineFailure(r: CliResult, status: number, ...mentions: RegExp[]): string {
  const context = `stdout: ${r.stdout}\nstderr: ${r.stderr}`;
  expect(r.timedOut, context).toBe(false);
  expect(r.code, context).toBe(status);
  const errLines = lines(r.stderr);
  expect(errLines, context).toHaveLength(1);
  const line = errLines[0]!;
  expect(line, context).toMatch(/^lead-enrich: /);
  expect(r.stderr, context).not.toMatch(/^\s+at /m);
  expect(r.stdout, context).toBe('');
  for (const mention of mentions) expect(line, context).toMatch(mention);
  return line;
}

function expectNoToken(r: CliResult, ...tokens: string[]): void {
  for (const token of [SECRET, ...tokens]) {
    expect(r.stdout).not.toContain(token);
    expect(r.stderr).not.toContain(token);
  }
}

describe('account', () => {
  it('--sandbox prints the embedded sandbox account without any token or base URL set', async () => {
    const r = await runCli(['account', '--sandbox']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Plan\s+Growth/m);
    expect(r.stdout).toMatch(/^Credits\s+10,000 remaining/m);
    expect(r.stdout).toMatch(/^Rate limit\s+600 requests\/minute/m);
    expect(r.stderr).toBe('');
  });

  it('--json prints {plans, credits, limits} from the configured API', async () => {
    const r = await runCli(['account', '--json'], { env: envFor() });
    expect(r.code, r.stderr).toBe(0);
    const data = JSON.parse(r.stdout);
    expect(Object.keys(data).sort()).toEqual(['credits', 'limits', 'plans']);
    expect(data.plans.current_plan.name).toBe('Growth');
    expect(data.credits.total_remaining_credits).toBe(sb.credits);
    expect(data.credits.low_credit_balance_min_threshold).toEqual(expect.any(Number));
    expect(data.limits.email_verify.api_rate_limit.total).toMatch(/RPM/);
    expectNoToken(r);
  });

  it('reads base URL and token from a --config file (and warns when it is world-readable)', async () => {
    const d = dir();
    const config = path.join(d, 'lead.json');
    fs.writeFileSync(config, JSON.stringify({ baseUrl: sb.baseUrl, token: SECRET }));
    fs.chmodSync(config, 0o644);
    const r = await runCli(['account', '--config', config]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Plan/m);
    if (process.platform !== 'win32') expect(r.stderr).toMatch(/chmod 600/);
    expectNoToken(r);

    fs.chmodSync(config, 0o600);
    const quiet = await runCli(['account', '--config', config]);
    expect(quiet.code, quiet.stderr).toBe(0);
    expect(quiet.stderr).toBe('');
  });
});

describe('lookup, mx, whois', () => {
  it('print the JSON data of each lookup kind', async () => {
    const [email, url, domain] = await Promise.all([
      runCli(['lookup', 'email', FOUND_EMAIL], { env: envFor() }),
      runCli(['lookup', 'url', FOUND_URL], { env: envFor() }),
      runCli(['lookup', 'domain', `https://www.${FOUND_DOMAIN.toUpperCase()}/about`], { env: envFor() }),
    ]);
    for (const r of [email, url, domain]) {
      expect(r.code, r.stderr).toBe(0);
      expectNoToken(r);
    }
    const e = JSON.parse(email.stdout);
    expect(e.email_address).toBe(FOUND_EMAIL);
    expect(e.lead.type).toBe('person');
    expect(e.lead.company_domain).toBe('bigcorp.com');
    const u = JSON.parse(url.stdout);
    expect(u.lead.type).toBe('person');
    expect(u.lead.network_url).toBe(FOUND_URL);
    const c = JSON.parse(domain.stdout);
    expect(c.name).toBe(FOUND_DOMAIN); // normalized before the request
    expect(c.lead.type).toBe('company');
  });

  it('prints an empty lead for a key that is not found, and exits 0', async () => {
    const [email, domain] = await Promise.all([
      runCli(['lookup', 'email', 'notfound.person@acme.com'], { env: envFor() }),
      runCli(['lookup', 'domain', 'notfound-co.com'], { env: envFor() }),
    ]);
    for (const r of [email, domain]) {
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).lead).toEqual({});
      expect(r.stderr).toMatch(/^\d{4}-[\d-]+T[\d:.]+Z lead-enrich: no lead found for this input \(nothing was charged\)$/m);
    }
  });

  it('mx and whois print their JSON', async () => {
    const [mx, whois, mxTimeout] = await Promise.all([
      runCli(['mx', 'example.com'], { env: envFor() }),
      runCli(['whois', 'example.com'], { env: envFor() }),
      runCli(['mx', 'example.com', '--timeout', '20000'], { env: envFor() }),
    ]);
    for (const r of [mx, whois, mxTimeout]) expect(r.code, r.stderr).toBe(0);
    const m = JSON.parse(mx.stdout);
    expect(m.domain).toBe('example.com');
    expect(m.mx_records.length).toBeGreaterThan(0);
    expect(m.mx_records[0]).toEqual({ exchange: 'mx1.example.com', priority: 10 });
    expect(JSON.parse(mxTimeout.stdout)).toEqual(m);
    const w = JSON.parse(whois.stdout);
    expect(w.domain).toBe('example.com');
    expect(w.whoisRecord.domain.name).toBeTruthy();
  });

  it('refuses invalid keys and timeouts with one line, and no request reaches the server', async () => {
    const before = sb.stats.requests;
    const env = envFor();
    const [badEmail, badUrl, badDomain, mxTooLong, whoisZero, mxText, badMxDomain] = await Promise.all([
      runCli(['lookup', 'email', 'not-an-email'], { env }),
      runCli(['lookup', 'url', 'ftp://x'], { env }),
      runCli(['lookup', 'domain', 'localhost'], { env }),
      runCli(['mx', 'example.com', '--timeout', '200000'], { env }),
      runCli(['whois', 'example.com', '--timeout', '0'], { env }),
      runCli(['mx', 'example.com', '--timeout', 'abc'], { env }),
      runCli(['mx', 'no_dots'], { env }),
    ]);
    expectOneLineError(badEmail, /Invalid email 'not-an-email'/, /no request was made/);
    expectOneLineError(badUrl, /Invalid url/, /no request was made/);
    expectOneLineError(badDomain, /Invalid domain 'localhost'/, /no request was made/);
    expectOneLineError(mxTooLong, /--timeout/, /110000/, /'200000'/);
    expectOneLineError(whoisZero, /--timeout/, /'0'/);
    expectOneLineError(mxText, /--timeout/, /'abc'/);
    expectOneLineError(badMxDomain, /Invalid domain/, /no request was made/);
    expect(sb.stats.requests).toBe(before);
  });
});

describe('base URL checks (no network attempt)', () => {
  it('refuses plain http to a non-loopback host before connecting', async () => {
    // A listener on every interface, reached through a non-loopback address of this machine: if
    // the CLI tried to connect (token in the header, unencrypted) the listener would see it.
    const external = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal);
    const connections: number[] = [];
    const listener = net.createServer((socket) => {
      connections.push(1);
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '0.0.0.0', resolve));
    const port = (listener.address() as net.AddressInfo).port;
    try {
      const runs = await Promise.all([
        runCli(['account', '--base-url', 'http://api.example.com/v2'], { env: { LEAD_API_TOKEN: SECRET } }),
        runCli(['lookup', 'email', FOUND_EMAIL], { env: { LEAD_API_TOKEN: SECRET, LEAD_API_BASE_URL: 'http://api.example.com/v2' } }),
        ...(external ? [runCli(['account', '--base-url', `http://${external.address}:${port}/v2`], { env: { LEAD_API_TOKEN: SECRET } })] : []),
      ]);
      for (const r of runs) {
        expectOneLineError(r, /Refusing plain http/, /https:\/\//);
        expect(r.stderr).not.toMatch(/Network failure|ENOTFOUND|EAI_AGAIN/);
        expectNoToken(r);
      }
      expect(connections).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    }
  });

  it('refuses a base URL that does not end with /v2, before any request', async () => {
    const before = sb.stats.requests;
    const origin = new URL(sb.baseUrl).origin;
    const [flag, env, wrongVersion] = await Promise.all([
      runCli(['account', '--base-url', origin], { env: { LEAD_API_TOKEN: SECRET } }),
      runCli(['account'], { env: { LEAD_API_TOKEN: SECRET, LEAD_API_BASE_URL: `${origin}/v1` } }),
      runCli(['mx', 'example.com', '--base-url', `${origin}/v2/extra`], { env: { LEAD_API_TOKEN: SECRET } }),
    ]);
    for (const r of [flag, env, wrongVersion]) expectOneLineError(r, /base URL/, /\/v2/);
    expect(sb.stats.requests).toBe(before);
  });

  it('lets the --base-url flag win over LEAD_API_BASE_URL', async () => {
    const r = await runCli(['account', '--json', '--base-url', sb.baseUrl], {
      env: { LEAD_API_TOKEN: SECRET, LEAD_API_BASE_URL: 'http://api.example.com/v2' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).plans.current_plan.name).toBe('Growth');
  });
});

describe('user errors: exit 1, one line that says what to do', () => {
  it('covers commands, options and configuration', async () => {
    const d = dir();
    const badJson = path.join(d, 'bad.json');
    fs.writeFileSync(badJson, '{ "baseUrl": "https://x.example/v2", }');
    const unknownKey = path.join(d, 'unknown.json');
    fs.writeFileSync(unknownKey, JSON.stringify({ baseUrl: sb.baseUrl, tokn: 'x' }));
    const wrongType = path.join(d, 'wrong-type.json');
    fs.writeFileSync(wrongType, JSON.stringify({ baseUrl: sb.baseUrl, timeoutMs: 'soon' }));
    const missingTokenFile = path.join(d, 'token-file.json');
    fs.writeFileSync(missingTokenFile, JSON.stringify({ baseUrl: sb.baseUrl, tokenFile: 'no-such-token' }));

    const before = sb.stats.requests;
    const cases: Array<[string, string[], Record<string, string>, RegExp[]]> = [
      ['unknown command', ['frobnicate'], envFor(), [/frobnicate/, /lead-enrich --help/]],
      ['no command', [], envFor(), [/Name a command/, /--help/]],
      ['unknown option', ['account', '--frobnicate'], envFor(), [/Unknown option --frobnicate/, /--help/]],
      ['invalid choice', ['lookup', 'phone', '555-0100'], envFor(), [/phone/, /email/, /--help/]],
      ['missing positional', ['lookup', 'email'], envFor(), [/--help/]],
      ['option without its value', ['account', '--base-url'], envFor(), [/base-url/, /--help/]],
      ['bad --request-timeout', ['account', '--request-timeout', 'abc'], envFor(), [/--request-timeout/, /positive integer/, /'abc'/]],
      ['missing token', ['account'], { LEAD_API_BASE_URL: sb.baseUrl }, [/No API token/, /set LEAD_API_TOKEN/]],
      ['missing base URL', ['account'], { LEAD_API_TOKEN: SECRET }, [/No API base URL/, /pass --base-url/, /LEAD_API_BASE_URL/]],
      ['missing --config file', ['account', '--config', path.join(d, 'nope.json')], {}, [/nope\.json/, /no such file/, /check the --config path/]],
      ['bad --config JSON', ['account', '--config', badJson], {}, [/bad\.json/, /not valid JSON/, /fix it/]],
      [
        'unknown config key',
        ['account', '--config', unknownKey],
        { LEAD_API_TOKEN: SECRET },
        [/unknown key "tokn"/, /remove or rename it/, /allowed: .*token/],
      ],
      ['wrong config type', ['account', '--config', wrongType], { LEAD_API_TOKEN: SECRET }, [/"timeoutMs"/, /positive integer/, /"soon"/]],
      ['missing tokenFile', ['account', '--config', missingTokenFile], {}, [/no-such-token/, /tokenFile/]],
    ];
    const results = await Promise.all(cases.map(([, args, env]) => runCli(args, { env })));
    results.forEach((r, i) => {
      const [name, , , mentions] = cases[i]!;
      try {
        expectOneLineError(r, ...mentions);
        expectNoToken(r);
      } catch (error) {
        (error as Error).message = `${name}: ${(error as Error).message}`;
        throw error;
      }
    });
    expect(sb.stats.requests).toBe(before);
  });
});

describe('help and version', () => {
  const COMMANDS = ['enrich', 'lookup', 'mx', 'whois', 'account', 'store', 'sandbox'];

  it('--help works for the program and every command, with examples', async () => {
    const runs = await Promise.all([runCli(['--help']), ...COMMANDS.map((c) => runCli([c, '--help']))]);
    runs.forEach((r, i) => {
      const what = i === 0 ? 'lead-enrich --help' : `${COMMANDS[i - 1]} --help`;
      expect(r.code, `${what}: ${r.stderr}`).toBe(0);
      expect(r.stdout, what).toContain('Examples');
      expect(r.stderr, what).toBe('');
    });
    for (const c of COMMANDS) expect(runs[0]!.stdout).toContain(c);
  });

  it('--version prints the package.json version', async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });
});

describe('token secrecy on every failure', () => {
  // The exit status of each: an API that is down is 2, never 1 (docs/cli-contract.md, "Every night,
  // unattended"); a body that is not what the interface says is the answer's own fault, 1.
  const FAULTS: Array<[FaultKind, RegExp, number]> = [
    ['error500', /Server error 500/, 2],
    ['error503', /Server error 503/, 2],
    ['reset', /Network failure|ECONNRESET|socket hang up/, 2],
    ['truncated', /cut short|not a JSON object|unparseable|wrong shape|Network failure/, 1],
    ['failed200', /failed/, 2],
    ['hang', /timeout/, 2],
  ];

  it('never prints the token, and says what to do about a rejected one', async () => {
    const revoked = await sandbox();
    revoked.revokeToken();
    const broke = await sandbox();
    broke.setCredits(0);
    const faulty = await Promise.all(FAULTS.map(() => sandbox()));
    faulty.forEach((s, i) => {
      s.setFaults({ [FAULTS[i]![0]]: 1 });
    });

    // The token also comes from a config file and a tokenFile in some runs: no source may leak.
    const d = dir();
    const configWithToken = path.join(d, 'with-token.json');
    fs.writeFileSync(configWithToken, JSON.stringify({ baseUrl: faulty[0]!.baseUrl, token: SECRET }), { mode: 0o600 });
    fs.writeFileSync(path.join(d, 'token'), `${SECRET}\n`, { mode: 0o600 });
    const configWithTokenFile = path.join(d, 'with-token-file.json');
    fs.writeFileSync(configWithTokenFile, JSON.stringify({ baseUrl: broke.baseUrl, tokenFile: 'token' }), { mode: 0o600 });

    const debug = { LEAD_ENRICH_DEBUG: '1' };
    try {
      const [wrong, wrongLookup, revokedRun, payment, badRequest, fromConfig, fromTokenFile, ...faultRuns] = await Promise.all([
        runCli(['account'], { env: { ...envFor(sb, WRONG), ...debug } }),
        runCli(['lookup', 'email', FOUND_EMAIL], { env: { ...envFor(sb, WRONG), ...debug } }),
        runCli(['lookup', 'email', FOUND_EMAIL], { env: { ...envFor(revoked), ...debug } }),
        runCli(['lookup', 'email', FOUND_EMAIL], { env: { ...envFor(broke), ...debug } }),
        runCli(['lookup', 'email', 'reject.me@acme.com'], { env: { ...envFor(sb), ...debug } }),
        runCli(['lookup', 'domain', FOUND_DOMAIN, '--config', configWithToken], { env: debug }),
        runCli(['mx', 'example.com', '--config', configWithTokenFile], { env: debug }),
        // A short timeout only where the server never answers: twelve CLIs started at once on two
        // cores can take longer than 300 ms to read an answer that did come (seen on Node 24 in CI).
        // Not shorter than a second even there: at a load average of 20 the request timed out
        // before this busy process had read it, and the server never saw the hang it was to show.
        ...faulty.map((s, i) =>
          runCli(['lookup', 'domain', FOUND_DOMAIN, '--request-timeout', FAULTS[i]![0] === 'hang' ? '1000' : '10000'], { env: { ...envFor(s), ...debug } }),
        ),
      ]);

      for (const r of [wrong, wrongLookup]) {
        expectOneLineError(r, /rejected the token/, /401/, /LEAD_API_TOKEN, or token \/ tokenFile/);
        expectNoToken(r, WRONG);
      }
      expectOneLineError(revokedRun, /401/, /LEAD_API_TOKEN, or token \/ tokenFile/);
      expectOneLineError(payment, /402|credits/i);
      expectOneLineError(badRequest, /rejected the input/);
      expectOneLineFailure(fromConfig, 2, /Server error 500/);
      expectOneLineError(fromTokenFile, /402|credits/i);
      faultRuns.forEach((r, i) => {
        const [kind, message, status] = FAULTS[i]!;
        try {
          expectOneLineFailure(r, status, message);
        } catch (error) {
          (error as Error).message = `fault ${kind}: ${(error as Error).message}`;
          throw error;
        }
      });
      for (const r of [wrong, wrongLookup, revokedRun, payment, badRequest, fromConfig, fromTokenFile, ...faultRuns]) {
        expectNoToken(r, WRONG);
      }
      expect(revoked.stats.unauthorized).toBeGreaterThan(0);
      expect(broke.stats.paymentRequired).toBeGreaterThan(0);
      faulty.forEach((s, i) => {
        expect(s.stats.faults[FAULTS[i]![0]], FAULTS[i]![0]).toBeGreaterThan(0);
      });
    } finally {
      for (const s of faulty) s.setFaults({});
      broke.setCredits(10_000);
    }
  });
});

describe('sandbox command', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('serves on the printed URL with the printed token and stops on %s with exit 0', async (signal) => {
    const child = spawnCli(['sandbox', '--port', '0']);
    try {
      const text = await waitForOutput(child, /LEAD_API_TOKEN=\S+/);
      const baseUrl = /LEAD_API_BASE_URL=(\S+)/.exec(text)?.[1];
      const token = /LEAD_API_TOKEN=(\S+)/.exec(text)?.[1];
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2$/);
      expect(text).toContain(`listening on ${baseUrl}`);
      expect(token).toBeTruthy();

      const ok = await fetch(`${baseUrl}/account/credits`, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      const body = (await ok.json()) as { status: string; data: { total_remaining_credits: number } };
      expect(body.status).toBe('success');
      expect(body.data.total_remaining_credits).toBe(10_000);
      const denied = await fetch(`${baseUrl}/account/credits`, { headers: { authorization: 'Bearer nope' } });
      expect(denied.status).toBe(401);
      await denied.text();

      child.kill(signal);
      const r = await child.result;
      expect(r.timedOut).toBe(false);
      expect(r.signal).toBeNull();
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/^\d{4}-[\d-]+T[\d:.]+Z lead-enrich: the sandbox stopped after 2 requests$/m);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  it('refuses a port that is already taken, with one line', async () => {
    const port = Number(new URL(sb.baseUrl).port);
    const r = await runCli(['sandbox', '--port', String(port)]);
    expectOneLineError(r, /Cannot start the sandbox/, /EADDRINUSE|in use/);
  });
});

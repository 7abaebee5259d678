// startSandbox takes the command line's words for its options besides its own
// (docs/library.md, "The sandbox in your tests"): `latency: '50-100'` as `latencyMs: [50, 100]`, an
// outage `kind: '503'` as 'error503', `tokenFile` as `--token-file`. Refusals name the option.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/api/errors.js';
import { resolveSandboxOptions, startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { makeTempDir } from '../helpers/files.js';

const started: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

async function sandbox(options: Parameters<typeof startSandbox>[0]): Promise<Sandbox> {
  const s = await startSandbox({ port: 0, ...options });
  started.push(s);
  return s;
}

describe("startSandbox in the command line's words", () => {
  it("latency: '50-100', '80' and 80 are latencyMs' ranges", () => {
    expect(resolveSandboxOptions({ latency: '50-100' }).latencyMs).toEqual([50, 100]);
    expect(resolveSandboxOptions({ latency: '80' }).latencyMs).toEqual([80, 80]);
    expect(resolveSandboxOptions({ latency: 80 }).latencyMs).toEqual([80, 80]);
    expect(resolveSandboxOptions({ latencyMs: [5, 9] }).latencyMs).toEqual([5, 9]);
  });

  it('refuses a latency it cannot read, and both spellings at once', () => {
    expect(() => resolveSandboxOptions({ latency: '100-50' })).toThrow(
      new ConfigError("Invalid sandbox option latency: must be MS or MIN-MAX in ms with MIN <= MAX, such as 50-150, got '100-50'"),
    );
    expect(() => resolveSandboxOptions({ latency: '50-100', latencyMs: [50, 100] })).toThrow(
      /^Invalid sandbox option latency: must not be given with latencyMs/,
    );
  });

  it("an answer takes at least the latency's minimum", async () => {
    const s = await sandbox({ latency: '60-80' });
    const started = Date.now();
    const r = await fetch(`${s.baseUrl}/account/credits`, { headers: { authorization: `Bearer ${s.token}` } });
    await r.text();
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
  });

  it("an outage of kind '503' (setOutage and the option) answers 503, as 'error503' does", async () => {
    const lookup = (s: Sandbox) =>
      fetch(`${s.baseUrl}/reverse_lookup/email?email_address=jane%40acme.com`, { headers: { authorization: `Bearer ${s.token}` } }).then(
        async (r) => (await r.text(), r.status),
      );
    const s = await sandbox({ outage: { kind: '503' } });
    expect(await lookup(s)).toBe(503);
    s.setOutage(undefined);
    expect(await lookup(s)).toBe(200);
    s.setOutage({ kind: '503', forMs: 60_000 });
    expect(await lookup(s)).toBe(503);
    expect(() => s.setOutage({ kind: '502' as never })).toThrow(
      /^Invalid sandbox option outage\.kind: must be one of error503 \(or '503'\), reset, hang, got '502'$/,
    );
  });

  it('a port in use: a ConfigError (a LeadError, as every error of the library) saying so', async () => {
    const s = await sandbox({});
    const port = Number(new URL(s.baseUrl).port);
    const error = await startSandbox({ port }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(`Cannot start the sandbox: 127.0.0.1:${port} is in use (EADDRINUSE); give another port (0: a free one)`);
  });

  it('tokenFile: one token across restarts, written 0600 on the first', async () => {
    const file = path.join(makeTempDir(), 'token');
    const first = await sandbox({ tokenFile: file });
    await first.close();
    expect(fs.readFileSync(file, 'utf8')).toBe(`${first.token}\n`);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const second = await sandbox({ tokenFile: file });
    expect(second.token).toBe(first.token);
    expect(() => resolveSandboxOptions({ token: 'abc', tokenFile: file })).toThrow(/^Invalid sandbox option tokenFile: must not be given with token/);
  });
});

// src/config.ts: flags > environment > config file, validation of the file, token sources and the
// world-readable warning (cli-contract.md, "Credentials and target").
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/api/errors.js';
import { readConfigFile, requireTarget, resolveConfig } from '../../src/options/config-file.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lead-enrich-config-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Writes a config file (JSON unless `raw` text is given) with the given mode; returns its path. */
function writeConfig(content: unknown, options: { dir?: string; name?: string; mode?: number; raw?: string } = {}): string {
  const file = path.join(options.dir ?? tempDir(), options.name ?? 'config.json');
  fs.writeFileSync(file, options.raw ?? JSON.stringify(content));
  fs.chmodSync(file, options.mode ?? 0o600);
  return file;
}

/** The ConfigError thrown by fn (fails the test when fn does not throw one). */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('config');
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, nothing was thrown');
}

const FILE_URL = 'https://file.example/v2';
const ENV_URL = 'https://env.example/v2';
const FLAG_URL = 'https://flag.example/v2';

describe('base URL precedence: flag > env > file', () => {
  const configPath = writeConfig({ baseUrl: FILE_URL });

  it('takes the flag over env and file', () => {
    const c = resolveConfig({ configPath, baseUrlFlag: FLAG_URL, env: { LEAD_API_BASE_URL: ENV_URL } });
    expect(c.baseUrl).toBe(FLAG_URL);
  });
  it('takes env over the file', () => {
    expect(resolveConfig({ configPath, env: { LEAD_API_BASE_URL: ENV_URL } }).baseUrl).toBe(ENV_URL);
  });
  it('falls back to the file (an empty env value counts as unset)', () => {
    expect(resolveConfig({ configPath, env: {} }).baseUrl).toBe(FILE_URL);
    expect(resolveConfig({ configPath, env: { LEAD_API_BASE_URL: '' } }).baseUrl).toBe(FILE_URL);
  });
  it('is undefined with no source at all, and does not read process.env when env is given', () => {
    const saved = process.env.LEAD_API_BASE_URL;
    process.env.LEAD_API_BASE_URL = ENV_URL;
    try {
      expect(resolveConfig({ env: {} }).baseUrl).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.LEAD_API_BASE_URL;
      else process.env.LEAD_API_BASE_URL = saved;
    }
  });
  it('keeps the rest of the file for the commands', () => {
    const file = writeConfig({ baseUrl: FILE_URL, timeoutMs: 1234, with: ['mx'], format: 'jsonl', $schema: 'x', _comment: 'y' });
    const c = resolveConfig({ configPath: file, env: {} });
    expect(c.file.timeoutMs).toBe(1234);
    expect(c.file.with).toEqual(['mx']);
    expect(c.file.format).toBe('jsonl');
  });
});

describe('token sources: env > "token" > "tokenFile"', () => {
  it('takes LEAD_API_TOKEN over the file (trimmed), and names the source', () => {
    const configPath = writeConfig({ token: 'file-token' });
    const c = resolveConfig({ configPath, env: { LEAD_API_TOKEN: '  env-token\n' } });
    expect(c.token).toBe('env-token');
    expect(c.tokenSource).toBe('LEAD_API_TOKEN');
  });

  it('takes "token" over "tokenFile"', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'token'), 'from-token-file\n');
    const configPath = writeConfig({ token: 'inline-token', tokenFile: 'token' }, { dir });
    const c = resolveConfig({ configPath, env: {} });
    expect(c.token).toBe('inline-token');
    expect(c.tokenSource).toContain('"token"');
    expect(c.tokenSource).not.toContain('inline-token');
  });

  it('reads "tokenFile" relative to the config file\'s directory, not the working directory', () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'secrets'));
    fs.writeFileSync(path.join(dir, 'secrets', 'token'), '\n  tok-from-file  \n');
    const configPath = writeConfig({ tokenFile: 'secrets/token' }, { dir });
    expect(process.cwd()).not.toBe(dir);
    const c = resolveConfig({ configPath, env: {} });
    expect(c.token).toBe('tok-from-file');
    expect(c.tokenSource).toContain('"tokenFile"');
  });

  it('expands ~ in "tokenFile" and in the --config path', () => {
    const home = tempDir();
    const saved = process.env.HOME;
    process.env.HOME = home; // os.homedir() reads HOME on POSIX
    try {
      fs.mkdirSync(path.join(home, '.config', 'lead-enrich'), { recursive: true });
      fs.writeFileSync(path.join(home, '.config', 'lead-enrich', 'token'), 'tok-home\n');
      const elsewhere = writeConfig({ tokenFile: '~/.config/lead-enrich/token' });
      expect(resolveConfig({ configPath: elsewhere, env: {} }).token).toBe('tok-home');

      writeConfig({ baseUrl: FILE_URL, tokenFile: '.config/lead-enrich/token' }, { dir: home, name: 'lead.json' });
      const c = resolveConfig({ configPath: '~/lead.json', env: {} });
      expect(c.baseUrl).toBe(FILE_URL);
      expect(c.token).toBe('tok-home'); // relative to the expanded config directory
    } finally {
      if (saved === undefined) delete process.env.HOME;
      else process.env.HOME = saved;
    }
  });

  it('does not read "tokenFile" when LEAD_API_TOKEN is set (a missing file is then no error)', () => {
    const configPath = writeConfig({ tokenFile: 'does-not-exist' });
    expect(resolveConfig({ configPath, env: { LEAD_API_TOKEN: 'env-token' } }).token).toBe('env-token');
  });

  it('reports a missing or empty "tokenFile" by name, with what to fix', () => {
    const dir = tempDir();
    const missing = writeConfig({ tokenFile: 'nope.txt' }, { dir });
    const e1 = configError(() => resolveConfig({ configPath: missing, env: {} }));
    expect(e1.message).toContain('nope.txt');
    expect(e1.message).toMatch(/no such file/);
    expect(e1.message).toMatch(/tokenFile/);

    fs.writeFileSync(path.join(dir, 'empty.txt'), '  \n');
    const empty = writeConfig({ tokenFile: 'empty.txt' }, { dir, name: 'c2.json' });
    const e2 = configError(() => resolveConfig({ configPath: empty, env: {} }));
    expect(e2.message).toMatch(/empty/);
    expect(e2.message).toContain('empty.txt');
  });

  it('leaves the token undefined when no source has one', () => {
    const c = resolveConfig({ env: {} });
    expect(c.token).toBeUndefined();
    expect(c.tokenSource).toBeUndefined();
  });
});

describe('config file validation', () => {
  it('accepts config.example.json as shipped', () => {
    const example = path.join(import.meta.dirname, '..', '..', 'config.example.json');
    const file = readConfigFile(example);
    expect(file.baseUrl).toMatch(/\/v2$/);
  });

  it('rejects an unknown key, naming it and listing the allowed keys', () => {
    const configPath = writeConfig({ baseUrl: FILE_URL, baseURL: FILE_URL });
    const e = configError(() => readConfigFile(configPath));
    expect(e.message).toContain(configPath);
    expect(e.message).toContain('"baseURL"');
    expect(e.message).toMatch(/unknown key/);
    for (const key of ['baseUrl', 'token', 'tokenFile', 'timeoutMs', 'retries', 'minCredits', 'with', 'maxAge', 'format']) {
      expect(e.message).toContain(key);
    }
  });

  it.each(['toString', 'constructor', 'hasOwnProperty', '__proto__'])('rejects "%s" as an unknown key (Object.prototype members are not rules)', (key) => {
    const configPath = writeConfig(undefined, { raw: `{"${key}": 1}` });
    const e = configError(() => readConfigFile(configPath));
    expect(e.message).toContain(`unknown key "${key}"`);
  });

  it.each([
    ['timeoutMs', 'soon', 'must be a positive integer', '"soon"'],
    ['timeoutMs', 0, 'must be a positive integer', '0'],
    ['retries', -1, 'must be a whole number, 0 or more', '-1'],
    ['retries', 1.5, 'must be a whole number, 0 or more', '1.5'],
    ['baseUrl', '', 'must be a non-empty string', '""'],
    ['token', 42, 'must be a non-empty string', '42'],
    ['format', 'xml', 'must be one of csv, jsonl, xlsx', '"xml"'],
    ['with', 'dns', 'must be mx, whois or company, or a list such as mx,company', '"dns"'],
    ['with', ['mx', 'dns'], 'must be mx, whois or company, or a list such as mx,company', '"dns"'],
    ['maxAge', 'bad', 'must be a duration such as 30d, 12h or 15m', '"bad"'],
    ['maxAge', '30', 'must be a duration such as 30d, 12h or 15m', '"30"'],
    ['maxAge', 30, 'must be a duration such as 30d, 12h or 15m', '30'],
    ['maxErrors', 'many', 'must be a whole number of rows such as 10, or a percentage such as 5%', '"many"'],
  ])('rejects %s = %j, naming the key, the rule and the value', (key, value, rule, shown) => {
    const configPath = writeConfig({ [key]: value });
    const e = configError(() => readConfigFile(configPath));
    expect(e.message).toContain(`"${key}"`);
    expect(e.message).toContain(rule);
    expect(e.message).toContain(`got ${shown}`);
  });

  it('rejects a file that is not JSON', () => {
    const configPath = writeConfig(undefined, { raw: '{ baseUrl: "https://x.example/v2", }' });
    const e = configError(() => readConfigFile(configPath));
    expect(e.message).toContain(configPath);
    expect(e.message).toMatch(/not valid JSON/);
  });

  it.each([
    ['an array', '[1, 2]'],
    ['null', 'null'],
    ['a string', '"https://x.example/v2"'],
  ])('rejects a file holding %s instead of an object', (_what, raw) => {
    const e = configError(() => readConfigFile(writeConfig(undefined, { raw })));
    expect(e.message).toMatch(/JSON object/);
  });

  it('reports a missing file with its path and what to check', () => {
    const missing = path.join(tempDir(), 'nope.json');
    const e = configError(() => resolveConfig({ configPath: missing, env: {} }));
    expect(e.message).toContain(missing);
    expect(e.message).toMatch(/no such file/);
    expect(e.message).toMatch(/--config/);
  });

  it('never puts a token in a validation message', () => {
    const configPath = writeConfig({ token: 'tok-SECRET-cfg-77', retries: 'many' });
    const e = configError(() => readConfigFile(configPath));
    expect(e.message).toContain('"retries"');
    expect(e.message).not.toContain('tok-SECRET-cfg-77');
  });
});

describe('world-readable config holding a token', () => {
  const warnings: string[] = [];
  const warn = (line: string): void => {
    warnings.push(line);
  };
  afterEach(() => {
    warnings.length = 0;
  });

  // Not on Windows: it has no POSIX permission bits, so "readable by others" and chmod do not apply.
  it.runIf(process.platform !== 'win32')('warns once, with the chmod to run, when the file is readable by others', () => {
    const configPath = writeConfig({ token: 'tok-SECRET-ww-1' }, { mode: 0o644 });
    const c = resolveConfig({ configPath, env: {}, warn });
    expect(c.token).toBe('tok-SECRET-ww-1'); // a warning, not an error
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(configPath);
    expect(warnings[0]).toContain('chmod 600');
    expect(warnings[0]).not.toContain('tok-SECRET-ww-1');
  });

  it('does not warn at mode 0600', () => {
    const configPath = writeConfig({ token: 'tok-SECRET-ww-2' }, { mode: 0o600 });
    resolveConfig({ configPath, env: {}, warn });
    expect(warnings).toEqual([]);
  });

  it('does not warn for a world-readable config without a token whose tokenFile is private', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'token'), 'tok', { mode: 0o600 });
    const configPath = writeConfig({ baseUrl: FILE_URL, tokenFile: 'token' }, { dir, mode: 0o644 });
    resolveConfig({ configPath, env: {}, warn });
    expect(warnings).toEqual([]);
  });

  // Not on Windows: it has no POSIX permission bits, so "readable by others" and chmod do not apply.
  it.runIf(process.platform !== 'win32')('warns, with the chmod to run, when the tokenFile is readable by others', () => {
    const dir = tempDir();
    const tokenPath = path.join(dir, 'token');
    fs.writeFileSync(tokenPath, 'tok-SECRET-ww-3', { mode: 0o644 });
    fs.chmodSync(tokenPath, 0o644);
    const configPath = writeConfig({ baseUrl: FILE_URL, tokenFile: 'token' }, { dir, mode: 0o600 });
    expect(resolveConfig({ configPath, env: {}, warn }).token).toBe('tok-SECRET-ww-3');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(tokenPath);
    expect(warnings[0]).toContain('chmod 600');
    expect(warnings[0]).not.toContain('tok-SECRET-ww-3');
  });

  // Not on Windows: it has no POSIX permission bits, so "readable by others" and chmod do not apply.
  it.runIf(process.platform !== 'win32')('a group-readable tokenFile or config holding a token (0640) is warned about too, naming the group', () => {
    const dir = tempDir();
    const tokenPath = path.join(dir, 'token');
    fs.writeFileSync(tokenPath, 'tok-SECRET-gr-1');
    fs.chmodSync(tokenPath, 0o640);
    const configPath = writeConfig({ baseUrl: FILE_URL, tokenFile: 'token' }, { dir, mode: 0o600 });
    expect(resolveConfig({ configPath, env: {}, warn }).token).toBe('tok-SECRET-gr-1');
    expect(warnings).toEqual([`the tokenFile ${tokenPath} is readable by other users (its group); run: chmod 600 ${tokenPath}`]);
    warnings.length = 0;
    const withToken = writeConfig({ token: 'tok-SECRET-gr-2' }, { mode: 0o640 });
    resolveConfig({ configPath: withToken, env: {}, warn });
    expect(warnings).toEqual([`the config file ${withToken} holds a token and is readable by other users (its group); run: chmod 600 ${withToken}`]);
    warnings.length = 0;
    fs.chmodSync(tokenPath, 0o600);
    resolveConfig({ configPath, env: {}, warn });
    expect(warnings).toEqual([]);
  });

  // Not on Windows: it has no POSIX permission bits, so "readable by others" and chmod do not apply.
  it.runIf(process.platform !== 'win32')('warns through readConfigFile too', () => {
    readConfigFile(writeConfig({ token: 't' }, { mode: 0o604 }), warn);
    expect(warnings).toHaveLength(1);
  });
});

describe('requireTarget', () => {
  it('says how to give a base URL when there is none', () => {
    const e = configError(() => requireTarget({ file: {}, baseUrl: undefined, token: 'x', tokenSource: 'LEAD_API_TOKEN' }));
    expect(e.message).toMatch(/No API base URL/);
    for (const hint of ['--base-url', 'LEAD_API_BASE_URL', '"baseUrl"', '--sandbox']) expect(e.message).toContain(hint);
  });

  it('says how to give a token when there is none', () => {
    const e = configError(() => requireTarget({ file: {}, baseUrl: FILE_URL, token: undefined, tokenSource: undefined }));
    expect(e.message).toMatch(/No API token/);
    for (const hint of ['LEAD_API_TOKEN', '"token"', '"tokenFile"', '--sandbox']) expect(e.message).toContain(hint);
  });

  it('treats a blank LEAD_API_TOKEN as no token', () => {
    const c = resolveConfig({ baseUrlFlag: FILE_URL, env: { LEAD_API_TOKEN: '   ' } });
    expect(() => requireTarget(c)).toThrow(/No API token/);
  });

  it('returns base URL and token when both are there', () => {
    const c = resolveConfig({ baseUrlFlag: FLAG_URL, env: { LEAD_API_TOKEN: 'tok-0123456789abcdef' } });
    expect(requireTarget(c)).toEqual({ baseUrl: FLAG_URL, token: 'tok-0123456789abcdef' });
  });

  it('refuses a token too short to be real, in one line naming where it came from', () => {
    const c = resolveConfig({ baseUrlFlag: FLAG_URL, env: { LEAD_API_TOKEN: 'x' } });
    expect(() => requireTarget(c)).toThrow(
      'The API token from LEAD_API_TOKEN is 1 character long: a real token has at least 16; set the token the Lead Lookup API gave you (or try --sandbox)',
    );
  });
});

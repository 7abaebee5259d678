// options/precedence.ts: the one order every option's value is looked for in (flag, then its
// environment variable, then the config file: docs/reference.md, "Precedence"), and the door each
// value is named by when its rule refuses it. cli/target.ts's store path goes by the same order.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { givenValue, readGiven } from '../../src/options/precedence.js';
import { openTarget } from '../../src/cli/target.js';

const CONFIG = { configFile: '/etc/lead-enrich.json' } as const;
const FILE = { store: '/from/file.sqlite', timeoutMs: 9000, baseUrl: 'https://file.example/v2' };

describe('the order of the sources', () => {
  it('takes the flag as typed over the environment and the config file', () => {
    const env = { LEAD_ENRICH_STORE: '/from/env.sqlite' };
    expect(givenValue('store', { flag: '/from/flag.sqlite', env, file: FILE, fileDoor: CONFIG })).toEqual(['/from/flag.sqlite', 'flag']);
  });
  it('takes the environment variable over the config file, named as the flag it stands in for', () => {
    const env = { LEAD_ENRICH_STORE: '/from/env.sqlite' };
    expect(givenValue('store', { env, file: FILE, fileDoor: CONFIG })).toEqual(['/from/env.sqlite', 'flag']);
  });
  it('falls back to the config file, named as that file; an empty variable is unset', () => {
    expect(givenValue('store', { env: {}, file: FILE, fileDoor: CONFIG })).toEqual(['/from/file.sqlite', CONFIG]);
    expect(givenValue('store', { env: { LEAD_ENRICH_STORE: '' }, file: FILE, fileDoor: CONFIG })).toEqual(['/from/file.sqlite', CONFIG]);
  });
  it('is undefined when no source has a value', () => {
    expect(givenValue('store', { env: {}, file: {}, fileDoor: CONFIG })).toBeUndefined();
    expect(readGiven('timeoutMs', { env: {}, file: {}, fileDoor: CONFIG })).toBeUndefined();
  });
  it('reads no variable for an option that has none, and no file key for an option that is not one', () => {
    // timeoutMs has no environment variable; `output` is no config key.
    expect(givenValue('timeoutMs', { env: { TIMEOUT_MS: '5' }, file: FILE, fileDoor: CONFIG })).toEqual([9000, CONFIG]);
    expect(givenValue('output', { env: {}, file: { output: 'x.csv' }, fileDoor: CONFIG })).toBeUndefined();
  });
  it('reads the value by its rule and names its source when the rule refuses it', () => {
    expect(readGiven('timeoutMs', { flag: 2500, env: {}, file: FILE, fileDoor: CONFIG })).toBe(2500);
    expect(() => readGiven('timeoutMs', { env: {}, file: { timeoutMs: -1 }, fileDoor: CONFIG })).toThrow(/lead-enrich\.json/);
    expect(() => readGiven('timeoutMs', { flag: -1, env: {}, file: FILE, fileDoor: CONFIG })).toThrow(/--request-timeout/);
  });
});

describe("a command's store file, by the same order", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lead-enrich-precedence-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ baseUrl: 'http://127.0.0.1:9/v2', token: 'token-0123456789abcdef', store: path.join(dir, 'file.sqlite') }), {
    mode: 0o600,
  });

  async function storeOf(flag: string | undefined, env: string | undefined): Promise<string> {
    const saved = process.env.LEAD_ENRICH_STORE;
    if (env === undefined) delete process.env.LEAD_ENRICH_STORE;
    else process.env.LEAD_ENRICH_STORE = env;
    const target = await openTarget({ config }, () => {});
    try {
      return target.storePath(flag);
    } finally {
      await target.close();
      if (saved === undefined) delete process.env.LEAD_ENRICH_STORE;
      else process.env.LEAD_ENRICH_STORE = saved;
    }
  }

  it('is --store, else LEAD_ENRICH_STORE, else the config file\'s "store"', async () => {
    expect(await storeOf('/flag.sqlite', '/env.sqlite')).toBe('/flag.sqlite');
    expect(await storeOf(undefined, '/env.sqlite')).toBe('/env.sqlite');
    expect(await storeOf(undefined, undefined)).toBe(path.join(dir, 'file.sqlite'));
  });
});

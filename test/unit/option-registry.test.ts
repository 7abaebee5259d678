// The option registry: the help's defaults, the config file's keys and enrich()'s known names come
// from its rows, and a value the command line hands on raw is read once, named by its door.
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/core/duration.js';
import { DEFAULTS } from '../../src/options/defaults.js';
import { withDoors } from '../../src/options/option-table.js';
import {
  CONFIG_KEYS,
  FLAG_NAMES,
  LIBRARY_NAMES,
  LIBRARY_RULED,
  OPTIONS,
  argName,
  defaultOf,
  helpOf,
  row,
  type OptionName,
} from '../../src/options/registry.js';
import { resolveOptions } from '../../src/run/settings.js';

const NAMES = Object.keys(OPTIONS) as OptionName[];

describe('the option registry', () => {
  it("help shows each row's default and environment variable, never a copy", () => {
    expect(helpOf('retries')).toBe(`retries of a transient failure (default ${DEFAULTS.retries})`);
    expect(helpOf('maxAge')).toContain(`(default ${formatDuration(defaultOf('maxAge')!)})`);
    expect(helpOf('patience')).toContain(`(default ${formatDuration(DEFAULTS.patienceMs)})`);
    expect(helpOf('windowMs')).toContain(`(default ${DEFAULTS.windowMs};`);
    expect(helpOf('yes')).toContain(`(config; default ${defaultOf('confirmAbove')})`);
    expect(helpOf('redis')).toContain('(env LEAD_ENRICH_REDIS)');
    for (const name of FLAG_NAMES) expect(helpOf(name), name).not.toMatch(/\{(env|default)/);
  });

  it('every flag has help, and every row is a flag, a config key or an option of enrich()', () => {
    for (const name of NAMES) {
      const { flag, help, config, library } = row(name);
      expect(flag !== undefined || config || library, name).toBeTruthy();
      if (flag !== undefined) expect(help, name).toBeTruthy();
    }
  });

  it('a flag, once yargs has it, is found under the name argName gives it', () => {
    expect(argName('only-missing')).toBe('onlyMissing');
    expect(argName('request-timeout')).toBe('requestTimeout');
    expect(argName('rpm')).toBe('rpm');
  });

  it('the config file takes every row marked config, and enrich() every row marked library', () => {
    expect(CONFIG_KEYS).toEqual(expect.arrayContaining(['maxErrors', 'onlyMissing', 'confirmAbove', 'windowMs', 'tokenFile']));
    expect(CONFIG_KEYS).not.toContain('quiet');
    expect(LIBRARY_NAMES).toEqual(expect.arrayContaining(['maxErrors', 'onlyMissing', 'maxAge', 'maxAgeMs', 'output']));
    expect(LIBRARY_NAMES).not.toContain('confirmAbove');
    // An option of enrich() that is no row is still refused by name.
    expect(() => resolveOptions({ input: 'in.csv', confirmAbove: 5 } as never)).toThrow(
      'Invalid option confirmAbove: not an option of enrich (see EnrichOptions)',
    );
  });

  it('every option of enrich() with a rule is a setting under its own name, its default applied (the settings are derived, not listed)', () => {
    const settings = resolveOptions({ input: 'a/contacts.csv', store: ':memory:' }) as unknown as Record<string, unknown>;
    // maxAgeMs is the older spelling of maxAge: read into it.
    for (const name of LIBRARY_RULED.filter((name) => name !== 'maxAgeMs')) {
      expect(Object.hasOwn(settings, name), name).toBe(true);
      const fallback = defaultOf(name);
      if (fallback !== undefined && name !== 'store') expect(settings[name], name).toEqual(fallback);
    }
    expect(Object.hasOwn(settings, 'maxAgeMs')).toBe(false);
    expect(resolveOptions({ input: 'a.csv', store: ':memory:', maxErrors: '5%', patience: '90s' })).toMatchObject({
      maxErrors: { percent: 5 },
      patience: 90_000,
    });
  });

  it('a value handed on as typed is read once, and refused in the words of the door it came by', () => {
    const flagged = withDoors({ input: 'in.csv', rpm: '0' } as never, { rpm: 'flag' });
    expect(() => resolveOptions(flagged)).toThrow("Invalid option --rpm: must be a positive integer, got '0'");
    const filed = withDoors({ input: 'in.csv', maxErrors: 'many' } as never, { maxErrors: { configFile: 'cfg.json' } });
    expect(() => resolveOptions(filed)).toThrow(
      'Invalid config file cfg.json: "maxErrors" must be a whole number of rows such as 10, or a percentage such as 5%, got "many"',
    );
    // The rate window is the library's tuning.windowMs, and the command line's --rate-window.
    const window = withDoors({ input: 'in.csv', tuning: { windowMs: 'x' } } as never, { windowMs: 'flag' });
    expect(() => resolveOptions(window)).toThrow("Invalid option --rate-window: must be a positive integer, got 'x'");
    expect(() => resolveOptions({ input: 'in.csv', tuning: { windowMs: 0 } })).toThrow('Invalid option tuning.windowMs: must be a positive integer, got 0');
    // Read as typed: the patience a flag gave, a duration, once.
    const patient = withDoors({ input: 'in.csv', patience: '90s' } as never, { patience: 'flag' });
    expect(resolveOptions(patient).patience).toBe(90_000);
  });
});

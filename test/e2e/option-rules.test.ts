// One rule per option: a bad value gets the same rule text whether it was typed as a
// flag, written in the --config file or given to enrich(); only the way the option is named is
// the door's. The flag and config doors are driven through the real command line.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/api/errors.js';
import { RuleBroken } from '../../src/core/rule.js';
import { OPTIONS, flagOf, row, type OptionName } from '../../src/options/registry.js';
import { shown } from '../../src/options/rules.js';
import { resolveOptions } from '../../src/run/settings.js';
import { runCli, tempDir } from '../helpers/cli.js';

// option, flag, bad value (as typed, as in JSON, as given to the library), and the rule's text.
const CASES: Array<[name: string, flag: string, bad: string | number, rule: string]> = [
  ['rpm', '--rpm', 0, 'must be a positive integer'],
  ['concurrency', '--concurrency', 'lots', 'must be a positive integer'],
  ['retries', '--retries', -1, 'must be a whole number, 0 or more'],
  ['minCredits', '--min-credits', 'none', 'must be a whole number, 0 or more'],
  ['maxAge', '--max-age', '3q', 'must be a duration such as 30d, 12h or 15m'],
  // Past one Node timer's reach the request would time out at once.
  ['timeoutMs', '--request-timeout', 2 ** 31, 'must be a positive integer, at most 2147483647 (about 24.8 days in milliseconds)'],
  ['format', '--format', 'xml', 'must be one of csv, jsonl, xlsx'],
  ['maxErrors', '--max-errors', 'many', 'must be a whole number of rows such as 10, or a percentage such as 5%'],
];

describe('the same rule text from every door', () => {
  const dir = tempDir();
  const input = path.join(dir, 'in.csv');
  fs.writeFileSync(input, 'email\njane@acme.com\n');
  // --sandbox: no token or base URL needed; the bad value stops the run before any request.
  const cli = (args: string[]) => runCli(['enrich', input, '--sandbox', ...args], { cwd: dir });

  it.each(CASES)('%s', async (name, flag, bad, rule) => {
    const typed = String(bad);
    const asFlag = await cli([`${flag}=${typed}`]);
    expect(asFlag.code).toBe(1);
    expect(asFlag.stderr).toBe(`lead-enrich: Invalid option ${flag}: ${rule}, got '${typed}' (code: config)\n`);

    const config = path.join(dir, `${name}.json`);
    fs.writeFileSync(config, JSON.stringify({ [name]: bad }));
    const inConfig = await cli(['--config', config]);
    expect(inConfig.code).toBe(1);
    expect(inConfig.stderr).toBe(`lead-enrich: Invalid config file ${config}: "${name}" ${rule}, got ${JSON.stringify(bad)} (code: config)\n`);

    let library: unknown;
    try {
      resolveOptions({ input, [name]: bad });
    } catch (error) {
      library = error;
    }
    expect(library).toBeInstanceOf(ConfigError);
    const got = typeof bad === 'string' ? `'${bad}'` : String(bad);
    expect((library as Error).message).toBe(`Invalid option ${name}: ${rule}, got ${got}`);
  });

  it('every option the command line passes to a run is a config-file key too (maxErrors included)', async () => {
    const config = path.join(dir, 'all.json');
    fs.writeFileSync(
      config,
      JSON.stringify({ maxErrors: '5%', prefix: 'x_', fields: 'lead_name', header: true, refresh: false, windowMs: 60_000, by: 'email', with: 'mx' }),
    );
    const r = await cli(['--config', config, '--dry-run', '--json']);
    expect(r.code, r.stderr).toBe(0);
  });
});

// Values most rules refuse; each option is tried with the first its rule refuses. An option whose
// rule refuses none of them fails here: add one it refuses.
const CANDIDATES = ['x', '0', 'ab', ',', ' ', 'a\nb', ''];

/** A value the option's rule refuses. */
function badFor(name: OptionName): string | undefined {
  return CANDIDATES.find((candidate) => {
    try {
      row(name).rule!(candidate);
      return false;
    } catch (error) {
      return error instanceof RuleBroken;
    }
  });
}

const RULED = (Object.keys(OPTIONS) as OptionName[]).filter((name) => row(name).rule !== undefined);

describe('every option of the registry: the same rule text through each of its doors', () => {
  const dir = tempDir();
  const input = path.join(dir, 'in.csv');
  fs.writeFileSync(input, 'email\njane@acme.com\n');
  const cli = (args: string[]) => runCli(['enrich', input, '--sandbox', ...args], { cwd: dir });

  it.each(RULED)('%s', async (name) => {
    const { flag, type, config, library } = row(name);
    const bad = badFor(name);
    expect(bad, `${name}: none of ${JSON.stringify(CANDIDATES)} breaks its rule`).toBeDefined();
    // The rule in words, as the library door gives it: "must be ..., got 'x'" (and a hint, if any).
    const said = (() => {
      try {
        row(name).rule!(bad);
      } catch (error) {
        const broken = error as RuleBroken;
        return `${broken.rule}${broken.whole ? '' : `, got ${shown(bad)}`}${broken.hint}`;
      }
      return '';
    })();
    expect(said).toMatch(/^(must|a |.* once)/);

    if (library) {
      const error = (() => {
        try {
          resolveOptions({ input, [name]: bad });
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error, `${name}: enrich() took ${JSON.stringify(bad)}`).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toBe(`Invalid option ${name}: ${said}`);
    }
    if (flag !== undefined && type !== 'boolean') {
      const asFlag = await cli([`${flagOf(name)}=${bad}`]);
      expect(asFlag.code, asFlag.stderr).toBe(1);
      // The command line says every error on one line.
      expect(asFlag.stderr).toBe(`lead-enrich: Invalid option ${flagOf(name)}: ${said.replace(/\s*\n\s*/g, ' ')} (code: config)\n`);
    }
    if (config) {
      const file = path.join(dir, `every-${name}.json`);
      fs.writeFileSync(file, JSON.stringify({ [name]: bad }));
      const inConfig = await cli(['--config', file]);
      expect(inConfig.code, inConfig.stderr).toBe(1);
      expect(inConfig.stderr).toBe(
        `lead-enrich: Invalid config file ${file}: "${name}" ${said.replace(`got ${shown(bad)}`, `got ${JSON.stringify(bad)}`)} (code: config)\n`,
      );
    }
    expect(library || config || flag !== undefined).toBe(true);
  });
});

// What every start of the command line pays before its command runs: the bundle the bin loads
// (.ci/bundle.mjs) reads node:http without building its ES module facade, which would load undici,
// and defers what yargs' string-width and got's @sindresorhus/is build as they load (an
// Intl.Segmenter, Unicode property regular expressions, two Intl.ListFormat) to their first use.
// A preload counts those constructions and whether undici loaded, and prints them as the process exits.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, refuseStaleBuild, tempDir } from '../helpers/cli.js';
import { runSync } from '../helpers/processes.js';

const PRELOAD = `
import fs from 'node:fs';
const built = { Segmenter: 0, ListFormat: 0 };
for (const name of Object.keys(built)) {
  const Original = Intl[name];
  Intl[name] = class extends Original {
    constructor(...args) { super(...args); built[name] += 1; }
  };
}
process.on('exit', () => {
  const undici = process.moduleLoadList.some((entry) => entry.includes('undici'));
  fs.writeSync(2, '\\nSTART-UP ' + JSON.stringify({ ...built, undici }) + '\\n');
});
`;

interface Built {
  Segmenter: number;
  ListFormat: number;
  undici: boolean;
}

function startUp(args: string[]): { status: number | null; built: Built } {
  refuseStaleBuild();
  const dir = tempDir();
  const preload = path.join(dir, 'count.mjs');
  fs.writeFileSync(preload, PRELOAD);
  const r = runSync(process.execPath, ['--import', pathToFileURL(preload).href, CLI_PATH, ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LEAD_ENRICH_STORE: path.join(dir, 'results.sqlite') },
  });
  const line = r.stderr.split('\n').find((l) => l.startsWith('START-UP '));
  if (line === undefined) throw new Error(`no START-UP line from ${args.join(' ')}: ${r.stderr}`);
  return { status: r.status, built: JSON.parse(line.slice('START-UP '.length)) as Built };
}

describe('what a start builds before the command runs', () => {
  it('--version and an option refused build no Intl segmenter or list format and load no undici', () => {
    expect(startUp(['--version'])).toEqual({ status: 0, built: { Segmenter: 0, ListFormat: 0, undici: false } });
    expect(startUp(['enrich', 'in.csv', '--budget', 'abc'])).toEqual({ status: 1, built: { Segmenter: 0, ListFormat: 0, undici: false } });
  });

  it('--help, which measures the width of its text, builds the segmenter then (the count sees it)', () => {
    const { status, built } = startUp(['--help']);
    expect(status).toBe(0);
    expect(built.Segmenter).toBeGreaterThan(0);
    expect(built.undici).toBe(false);
  });
});

// Each fact is declared once in the code (the options' registry, the stops table, the exit
// statuses, the closed set of error codes) and written by hand in the docs: these tests fail when
// a hand-written copy drifts from its declaration.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as errors from '../../src/api/errors.js';
import { ERROR_CODES, LeadEnrichError } from '../../src/api/errors.js';
import { EXIT_STATUSES, exitStatusesHelp } from '../../src/core/exit-statuses.js';
import { STOP_ORDER, STOPS, stopOf } from '../../src/lookup/stops.js';
import { FLAG_NAMES, row } from '../../src/options/registry.js';
import { COMMAND_FLAGS } from '../../src/options/command-flags.js';
import { SANDBOX_FLAGS } from '../../src/sandbox/flags.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { readDocument, section } from '../helpers/docs.js';

const REFERENCE = 'docs/reference.md';
const CONTRACT = 'docs/cli-contract.md';

/** The rows of the first markdown table after `heading` (a `## ` or `### ` line) in `file`, as their cells. */
function tableAfter(file: string, heading: string): string[][] {
  const text = readDocument(file);
  const start = text.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`${file} has no "${heading}"`);
  const lines = text.slice(start).split('\n');
  const first = lines.findIndex((line) => line.startsWith('| '));
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

/** The `--flags` the first cells of an option table name (`-o, --output FILE`, `--no-header`: header). */
function flagsOf(rows: string[][]): Set<string> {
  const flags = rows.flatMap(([first]) => [...(first ?? '').matchAll(/--(no-)?([a-z][a-z-]*)/g)].map((m) => m[2]!));
  return new Set(flags);
}

/** The error classes api/errors.ts exports (the library exports them all). */
const errorClasses = () =>
  Object.values(errors).filter(
    (value): value is typeof LeadEnrichError => typeof value === 'function' && (value === LeadEnrichError || value.prototype instanceof LeadEnrichError),
  );

/** The code an error of the class carries, from an instance made without running its constructor's checks. */
const codeOf = (cls: typeof LeadEnrichError): string => {
  const made = Reflect.construct(cls, cls === LeadEnrichError || cls.name === 'RowError' ? ['no_key', 'm'] : ['m', undefined]) as LeadEnrichError;
  return made.code;
};

const enrichFlags = FLAG_NAMES.map((name) => row(name).flag!);

describe('the options, as the registry declares them', () => {
  it("every enrich flag is in the reference's option table, and every flag there is an enrich flag", () => {
    const listed = flagsOf(tableAfter(REFERENCE, '## enrich'));
    expect(enrichFlags.filter((flag) => !listed.has(flag))).toEqual([]);
    expect([...listed].filter((flag) => !enrichFlags.includes(flag))).toEqual([]);
  });

  it('every flag of every command is a row with help: yargs is told of flags by cli/flag-options.ts alone', () => {
    const cli = path.join(REPO_ROOT, 'src', 'cli');
    const told = fs
      .readdirSync(cli)
      .filter((file) => file.endsWith('.ts') && file !== 'flag-options.ts')
      .filter((file) => /\.options?\(/.test(fs.readFileSync(path.join(cli, file), 'utf8')));
    expect(told).toEqual([]);
    for (const [name, { help }] of [...Object.entries(COMMAND_FLAGS), ...Object.entries(SANDBOX_FLAGS)]) expect(help, name).toBeTruthy();
  });

  it("every enrich flag is in the contract's option table, and every flag there is an enrich flag", () => {
    const listed = flagsOf(tableAfter(CONTRACT, '### `enrich` options'));
    expect(enrichFlags.filter((flag) => !listed.has(flag))).toEqual([]);
    expect([...listed].filter((flag) => !enrichFlags.includes(flag))).toEqual([]);
  });
});

describe('the error codes, a closed set', () => {
  it("every code the program can write to a sidecar or a fatal line is in the reference's code tables", () => {
    const sidecar = tableAfter(REFERENCE, '### The error sidecar')
      .map(([first]) => first!)
      .join(' ');
    const fatal = section(REFERENCE, 'Exit statuses');
    const listed = new Set([...`${sidecar} ${fatal}`.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
    // client_closed: a LeadClient's own, never the command line's (docs/library.md lists it).
    expect(ERROR_CODES.filter((code) => code !== 'client_closed' && !listed.has(code))).toEqual([]);
  });

  it("every error class the library exports is in docs/library.md's table, with its code", () => {
    const table = tableAfter('docs/library.md', '### Errors');
    for (const cls of errorClasses().filter((c) => c !== LeadEnrichError)) {
      const line = table.find(([, classes]) => classes!.split(/,\s*/).includes(`\`${cls.name}\``));
      expect([cls.name, line?.[0]]).toEqual([cls.name, expect.stringContaining(`\`${codeOf(cls)}\``)]);
    }
  });

  it('every error class has a code of the set and declares its policy; an outage exits 2, and a stop it makes is one of the stops table', () => {
    const classes = errorClasses();
    expect(classes.length).toBeGreaterThan(20);
    for (const cls of classes) {
      expect(ERROR_CODES).toContain(codeOf(cls));
      const { policy } = cls;
      if (policy.outage) expect([cls.name, policy.transient, policy.exit]).toEqual([cls.name, true, 2]);
      if (policy.stops) expect(STOP_ORDER).toContain(policy.stops);
    }
  });
});

describe('the stops and the exit statuses, as declared', () => {
  const order = EXIT_STATUSES.map((e) => e.status);
  /** The statuses of a markdown table whose rows start with `| N |`, and each row's text. */
  const tableOf = (text: string) => new Map([...text.matchAll(/^\| (\d+) \|(.*)$/gm)].map((m) => [Number(m[1]), m[2]!]));

  it('every listing gives the same statuses in the same order: the docs and --help', () => {
    expect([...tableOf(section(REFERENCE, 'Exit statuses')).keys()]).toEqual(order);
    expect([...tableOf(section(CONTRACT, 'Exit status of `enrich`')).keys()]).toEqual(order);
    expect([...exitStatusesHelp().matchAll(/^ {2}(\d+) /gm)].map((m) => Number(m[1]))).toEqual(order);
  });

  it("each stop's exit status is listed with the row code its rows are skipped with, in the docs and in --help", () => {
    const reference = tableOf(section(REFERENCE, 'Exit statuses'));
    const contract = tableOf(section(CONTRACT, 'Exit status of `enrich`'));
    const help = new Map(EXIT_STATUSES.map((e) => [e.status, e.help.join(' ')]));
    for (const reason of STOP_ORDER) {
      const stop = stopOf(reason);
      if (!('words' in stop) || stop.row.kind !== 'skipped' || stop.exit === 130) continue;
      for (const listing of [reference, contract, help])
        expect([reason, listing.get(stop.exit)]).toEqual([reason, expect.stringMatching(new RegExp(`\\b${stop.row.code}\\b`))]);
    }
  });

  it('a stop that halts drops the queue too, and only the reserve and the budget let requests in flight finish', () => {
    for (const reason of STOP_ORDER) if (stopOf(reason).halts) expect([reason, stopOf(reason).queue]).toEqual([reason, 'drop']);
    expect(STOP_ORDER.filter((reason) => stopOf(reason).queue === 'finish')).toEqual(['credits', 'budget']);
    expect(STOPS.interrupt.exit).toBe(130);
  });
});

// Outputs never over inputs or configuration, and never what they should not be: --report, -o and
// --errors naming the config file or its tokenFile are refused before any request; rows (and
// --changes -) sent to stdout never into the input, the store or the config; --fields takes the answer's own members
// only and never two columns of one name; added header cells are formula-escaped like added cells;
// a workbook is not written to a terminal (as gzip refuses).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, lines, runCli, tempDir } from '../helpers/cli.js';
import { writeCsv } from '../helpers/files.js';
import { run, runSync } from '../helpers/processes.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';

const startSandbox = sandboxesPerTest();

function expectRefused(r: { code: number | null; stderr: string }, line: string): void {
  expect(r.code, r.stderr).toBe(1);
  // A refusal of the configuration's: one line, with its stable code.
  expect(lines(r.stderr)).toEqual([`${line} (code: config)`]);
}

describe('the configuration is never an output', () => {
  it('--report, -o and --errors naming the config file or the tokenFile: refused before any request, the files unchanged', async () => {
    const sb = await startSandbox();
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['jane@acme.com']]);
    const config = path.join(dir, 'config.json');
    // A name a report may have (.json): only its being the tokenFile refuses it.
    const token = path.join(dir, 'token.json');
    fs.writeFileSync(config, JSON.stringify({ baseUrl: sb.baseUrl, tokenFile: 'token.json' }), { mode: 0o600 });
    fs.writeFileSync(token, sb.token, { mode: 0o600 });
    const before = [fs.readFileSync(config, 'utf8'), fs.readFileSync(token, 'utf8')];
    const env = { LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') };
    const cases: Array<[string[], string]> = [
      [['--report', config], `lead-enrich: --report would overwrite the config file (${config}): choose another path`],
      [['--report', path.join(dir, 'sub', '..', 'token.json')], `lead-enrich: --report would overwrite the tokenFile (${token}): choose another path`],
      [['-o', token], `lead-enrich: --output would overwrite the tokenFile (${token}): choose another path`],
      [['--errors', config], `lead-enrich: --errors would overwrite the config file (${config}): choose another path`],
      [['--store', config], `lead-enrich: --store would overwrite the config file (${config}): choose another path`],
    ];
    for (const [args, line] of cases) expectRefused(await runCli(['enrich', input, '--config', config, ...args], { env }), line);
    // A hard link is the same file too.
    const linked = path.join(dir, 'report.json');
    fs.linkSync(config, linked);
    expectRefused(
      await runCli(['enrich', input, '--config', config, '--report', linked], { env }),
      `lead-enrich: --report would overwrite the config file (${config}): choose another path`,
    );
    expect([fs.readFileSync(config, 'utf8'), fs.readFileSync(token, 'utf8')]).toEqual(before);
    expect(sb.stats.requests).toBe(0);
  });

  it('rows on stdout are never appended to the input, the store or the config file', async () => {
    const sb = await startSandbox();
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['jane@acme.com']]);
    const store = path.join(dir, 's.sqlite');
    const config = path.join(dir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ baseUrl: sb.baseUrl, token: sb.token }), { mode: 0o600 });
    expect((await runCli(['enrich', input, '--config', config, '-q', '-o', path.join(dir, 'out.csv')], { env: { LEAD_ENRICH_STORE: store } })).code).toBe(0);
    for (const [into, named] of [
      [input, 'the input'],
      [store, 'the store'],
      [config, 'the config file'],
    ] as const) {
      const before = fs.readFileSync(into);
      const r = runSync('sh', ['-c', `"$0" "$1" enrich "$2" --config "$3" -o - >> "$4"`, process.execPath, CLI_PATH, input, config, into], {
        env: { PATH: process.env.PATH, HOME: dir, LEAD_ENRICH_STORE: store },
      });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toBe(`lead-enrich: Refusing to write the rows into ${named} (${into}): stdout is that file; send them to another file (code: config)\n`);
      expect(fs.readFileSync(into).equals(before)).toBe(true);
    }
    // --changes - is standard output too: never appended to the input either.
    const before = fs.readFileSync(input);
    const r = runSync(
      'sh',
      ['-c', `"$0" "$1" enrich "$2" --config "$3" -o "$4" --changes - >> "$2"`, process.execPath, CLI_PATH, input, config, path.join(dir, 'o.csv')],
      { env: { PATH: process.env.PATH, HOME: dir, LEAD_ENRICH_STORE: store } },
    );
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toBe(
      `lead-enrich: Refusing to write the changes into the input (${input}): stdout is that file; send them to another file (code: config)\n`,
    );
    expect(fs.readFileSync(input).equals(before)).toBe(true);
  });
});

describe('--fields and the added header', () => {
  it("lead.MEMBER reads the answer's own members only: lead.constructor and lead.toString are empty", async () => {
    const sb = await startSandbox();
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['person.0@company0.com'], ['nobody@nowhere.example']]);
    const out = path.join(dir, 'out.csv');
    const r = await runCli(['enrich', input, '-q', '-o', out, '--fields', 'lead.name,lead.constructor,lead.toString,lead.__proto__'], {
      env: { LEAD_API_BASE_URL: sb.baseUrl, LEAD_API_TOKEN: sb.token },
    });
    expect(r.code, r.stderr).toBe(0);
    const [header, ...rows] = fs.readFileSync(out, 'utf8').trim().split('\n');
    expect(header).toBe('email,lead_status,lead_name,lead_constructor,lead_toString,lead___proto__');
    expect(rows.map((row) => row.split(',').slice(3))).toEqual([
      ['', '', ''],
      ['', '', ''],
    ]);
    expect(rows[0]).toMatch(/^person\.0@company0\.com,found,[^,]+,/);
  });

  it('two names that add one column are refused before any request', async () => {
    const sb = await startSandbox();
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['jane@acme.com']]);
    const env = { LEAD_API_BASE_URL: sb.baseUrl, LEAD_API_TOKEN: sb.token };
    expectRefused(
      await runCli(['enrich', input, '--fields', 'lead_name,lead.name'], { env }),
      "lead-enrich: Invalid option --fields: 'lead_name' and 'lead.name' both add the column lead_name; give each column once",
    );
    expectRefused(
      await runCli(['enrich', input, '--fields', 'lead.status'], { env }),
      "lead-enrich: Invalid option --fields: 'lead.status' adds the column lead_status, which every run writes (the row's status); leave it out",
    );
    expect(sb.stats.requests).toBe(0);
  });

  it("--prefix '=x': the added header cells are escaped as added cells are; the input's are not", async () => {
    const sb = await startSandbox();
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['=email'], ['jane@acme.com']]);
    const out = path.join(dir, 'out.csv');
    const r = await runCli(['enrich', input, '-q', '-o', out, '--column', '=email', '--prefix', '=x', '--fields', 'lead_name'], {
      env: { LEAD_API_BASE_URL: sb.baseUrl, LEAD_API_TOKEN: sb.token },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(out, 'utf8').split('\n')[0]).toBe("=email,'=xlead_status,'=xlead_name");
  });
});

/** util-linux's `script` gives the CLI a pseudo-terminal; macOS's takes other flags. */
const HAS_SCRIPT = runSync('script', ['--version']).stdout?.includes('util-linux') ?? false;

// Skipped without util-linux's script (Debian: bsdutils; .ci/run installs it): the refusal is
// of a terminal, and script gives the CLI one.
describe.skipIf(!HAS_SCRIPT)('a workbook on stdout', { meta: { skipReason: 'no util-linux script on PATH (Debian: bsdutils)' } }, () => {
  it('to a terminal: refused in one line, no zip byte written; to a pipe: written', async () => {
    const sb = await startSandbox();
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['jane@acme.com']]);
    const env = { PATH: process.env.PATH, HOME: dir, LEAD_API_BASE_URL: sb.baseUrl, LEAD_API_TOKEN: sb.token, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') };
    // Everything the terminal received (any zip byte would be there, beside the line).
    const screen = await run('script', ['-qfec', `"${process.execPath}" "${CLI_PATH}" enrich "${input}" -o - --format xlsx`, '/dev/null'], {
      env,
      stdin: 'ignore',
      timeoutMs: Infinity,
    });
    expect(screen.code).toBe(1);
    expect(screen.stdout.trim()).toBe(
      'lead-enrich: Refusing to write an .xlsx workbook to a terminal: send stdout to a file (> out.xlsx), or give -o out.xlsx (code: config)',
    );
    expect(sb.stats.requests).toBe(0);
    const piped = await runCli(['enrich', input, '-o', '-', '--format', 'xlsx', '-q'], { env });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout.startsWith('PK')).toBe(true);
  });
});

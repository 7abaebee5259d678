// What the command line says when it is used wrong or asked for help, as a new user meets it:
// did-you-mean naming what was typed, a missing input in a sentence, a column clash suggesting
// only what works, a dry run's time in units that fit, what a tab-separated output named .csv says, and
// shell completion for bash and zsh.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CLI_PATH, REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { emails, writeCsv } from '../helpers/files.js';

let sandbox: Sandbox;
let env: Record<string, string>;
let dir: string;
let contacts: string;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, rpm: 60_000 });
  env = { LEAD_API_BASE_URL: sandbox.baseUrl, LEAD_API_TOKEN: sandbox.token };
  dir = tempDir();
  contacts = writeCsv(path.join(dir, 'contacts.csv'), [['email'], ...emails(5).map((e) => [e])]);
});
afterAll(() => sandbox.close());

/** The one line of a usage error, and that nothing was asked of the API. */
async function refusal(args: string[]): Promise<string> {
  const before = sandbox.stats.requests;
  const r = await runCli(args, { env });
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(sandbox.stats.requests).toBe(before);
  return r.stderr.trim();
}

describe('usage mistakes, said with what was typed', () => {
  it('--colum suggests --column', async () => {
    expect(await refusal(['enrich', contacts, '--colum', 'email'])).toBe("lead-enrich: Unknown option --colum: did you mean --column? Run 'lead-enrich --help' for usage.");
  });

  it('several unknown options are each named, with their nearest', async () => {
    expect(await refusal(['enrich', contacts, '--colum', 'email', '--wiht', 'mx', '--zzzzzz'])).toBe(
      "lead-enrich: Unknown options: --colum (did you mean --column?), --wiht (did you mean --with?), --zzzzzz. Run 'lead-enrich --help' for usage.",
    );
  });

  it("enrch names itself and suggests enrich; a word that is no command lists the commands; a store subcommand too", async () => {
    expect(await refusal(['enrch', contacts])).toBe("lead-enrich: Unknown command 'enrch': did you mean enrich? Run 'lead-enrich --help' for usage.");
    expect(await refusal(['foo'])).toMatch(/^lead-enrich: Unknown command 'foo': the commands are enrich, lookup, mx, whois, account, store, sandbox, completion\. /);
    expect(await refusal(['store', 'prnue', '--older-than', '1d'])).toMatch(/Unknown command 'prnue': did you mean prune\?/);
  });

  it('enrich with no input says to give the CSV path or - for stdin', async () => {
    for (const args of [['enrich'], ['enrich', '--sandbox', '--with', 'mx']]) {
      expect(await refusal(args)).toBe(
        "lead-enrich: Give the CSV file to enrich, or - to read it from standard input: lead-enrich enrich contacts.csv. Run 'lead-enrich --help' for usage.",
      );
    }
    expect(await refusal(['mx'])).toMatch(/Give the domain: lead-enrich mx acme\.com\./);
  });

  it('an argument too many is named', async () => {
    expect(await refusal(['enrich', contacts, 'other.csv'])).toMatch(/Unexpected argument 'other\.csv'\./);
  });

  it('a column clash suggests a --prefix that works (not --fields, which always keeps lead_status), and that prefix does work', async () => {
    const enriched = writeCsv(path.join(dir, 'again.csv'), [['email', 'lead_status', 'new_lead_name'], ...emails(3).map((e) => [e, 'found', 'x'])]);
    const line = await refusal(['enrich', enriched, '-o', path.join(dir, 'again.out.csv')]);
    expect(line).toMatch(/already has a column named 'lead_status', which this run would add again: give --prefix new2_ \(or another prefix\)/);
    expect(line).not.toMatch(/--fields/);
    const fields = await runCli(['enrich', enriched, '-o', path.join(dir, 'again.fields.csv'), '--fields', 'lead_title'], { env });
    expect(fields.code, 'what --fields cannot do').toBe(1);
    const prefixed = await runCli(['enrich', enriched, '-o', path.join(dir, 'again.out.csv'), '--prefix', 'new2_'], { env });
    expect(prefixed.code, prefixed.stderr).toBe(0);
  });
});

describe('a dry run', () => {
  it('says the time needed in units that fit, never "about 0.05 minutes"', async () => {
    const r = await runCli(['enrich', contacts, '--dry-run'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^Time needed: about 1s at 60000 RPM$/m);
    expect(r.stderr).not.toMatch(/minutes/);
  });
});

describe("Excel's Unicode text (.txt, UTF-16, tab-separated)", () => {
  it('is enriched into <name>.enriched.csv as the contract names it, tab-separated like the input, and stderr says so', async () => {
    const input = path.join(dir, 'export.txt');
    fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'input', 'excel-unicode-text-utf16le.txt'), input);
    const r = await runCli(['enrich', input], { env });
    expect(r.code, r.stderr).toBe(0);
    const out = fs.readFileSync(path.join(dir, 'export.enriched.csv'), 'utf8');
    expect(out.split('\r\n')[0]).toContain('\tlead_status\t');
    expect(fs.existsSync(path.join(dir, 'export.enriched.errors.csv'))).toBe(true);
    expect(r.stderr).toMatch(/the input is tab-separated, and so are .*export\.enriched\.csv/);
  });

  it('written to a .tsv or .txt name, nothing needs saying', async () => {
    const input = path.join(dir, 'export3.txt');
    fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'input', 'excel-unicode-text-utf16le.txt'), input);
    const r = await runCli(['enrich', input, '-o', path.join(dir, 'export3.enriched.tsv'), '--errors', path.join(dir, 'export3.errors.tsv')], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/tab-separated/);
  });

  it('written to a .csv name, stderr says it is tab-separated', async () => {
    const input = path.join(dir, 'export2.txt');
    fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'input', 'excel-unicode-text-utf16le.txt'), input);
    const r = await runCli(['enrich', input, '-o', path.join(dir, 'export2.csv')], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/lead-enrich: the input is tab-separated, and so are .*export2\.csv and .*export2\.errors\.csv/);
  });
});

describe('lead-enrich completion', () => {
  const shim = () => {
    const bin = tempDir('lead-enrich-bin-');
    fs.writeFileSync(path.join(bin, 'lead-enrich'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`, { mode: 0o755 });
    return bin;
  };

  it('writes a bash script that completes `lead-enrich en` to enrich, commands and options alike', async () => {
    const r = await runCli(['completion', 'bash']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('complete -o bashdefault -o default -F _lead-enrich_yargs_completions lead-enrich');
    const complete = (words: string[]) =>
      execFileSync('bash', ['-c', `source <(lead-enrich completion bash); COMP_WORDS=(${words.join(' ')}); COMP_CWORD=${words.length - 1}; _lead-enrich_yargs_completions; printf '%s\\n' "\${COMPREPLY[@]}"`], {
        env: { PATH: `${shim()}:${process.env.PATH}`, HOME: process.env.HOME },
        encoding: 'utf8',
      }).trim();
    expect(complete(['lead-enrich', 'en'])).toBe('enrich');
    expect(complete(['lead-enrich', 'enrich', 'x.csv', '--colu'])).toBe('--column');
    expect(complete(['lead-enrich', 'store', 'pr'])).toBe('prune');
  });

  it('writes a zsh script (compdef) whose completions carry their descriptions; $SHELL chooses when no shell is named', async () => {
    const zsh = await runCli(['completion', 'zsh']);
    expect(zsh.code, zsh.stderr).toBe(0);
    expect(zsh.stdout).toMatch(/^#compdef lead-enrich$/m);
    expect(zsh.stdout).toContain('compdef _lead-enrich_yargs_completions lead-enrich');
    expect((await runCli(['completion'], { env: { SHELL: '/usr/bin/zsh' } })).stdout).toMatch(/^#compdef lead-enrich$/m);
    expect((await runCli(['completion'], { env: { SHELL: '/bin/bash' } })).stdout).toContain('complete -o bashdefault');
    const words = await runCli(['--get-yargs-completions', 'lead-enrich', 'en'], { env: { SHELL: '/usr/bin/zsh' } });
    expect(words.stdout).toMatch(/^enrich:Enrich a CSV or \.xlsx file/m);
  });

  it('completion --help says what it does instead of printing the script', async () => {
    const r = await runCli(['completion', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^lead-enrich completion \[bash\|zsh\]\n/);
    expect(r.stdout).not.toMatch(/begin-lead-enrich-completions/);
  });

  it('refuses a shell it has no script for', async () => {
    const r = await runCli(['completion', 'fish']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Unknown shell 'fish' for completion: give bash or zsh/);
  });
});

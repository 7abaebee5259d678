// What the command line says when it is used wrong or asked for help, as a new user meets it:
// did-you-mean naming what was typed, a missing input in a sentence, a column clash suggesting
// only what works, a dry run's time in units that fit, what a tab-separated output named .csv says, and
// shell completion for bash and zsh.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskToken } from '../../src/api/mask-token.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CLI_PATH, REPO_ROOT, runCli, tempDir } from '../helpers/cli.js';
import { emails, writeCsv } from '../helpers/files.js';
import { runChecked, runSync } from '../helpers/processes.js';

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
    expect(await refusal(['enrich', contacts, '--colum', 'email'])).toBe(
      "lead-enrich: Unknown option --colum: did you mean --column? Run 'lead-enrich --help' for usage. (code: usage)",
    );
  });

  it('several unknown options are each named, with their nearest', async () => {
    expect(await refusal(['enrich', contacts, '--colum', 'email', '--wiht', 'mx', '--zzzzzz'])).toBe(
      "lead-enrich: Unknown options: --colum (did you mean --column?), --wiht (did you mean --with?), --zzzzzz. Run 'lead-enrich --help' for usage. (code: usage)",
    );
  });

  it('enrch names itself and suggests enrich; a word that is no command lists the commands; a store subcommand too', async () => {
    expect(await refusal(['enrch', contacts])).toBe(
      "lead-enrich: Unknown command 'enrch': did you mean enrich? Run 'lead-enrich --help' for usage. (code: usage)",
    );
    expect(await refusal(['foo'])).toMatch(
      /^lead-enrich: Unknown command 'foo': the commands are enrich, lookup, mx, whois, account, store, sandbox, completion\. /,
    );
    expect(await refusal(['store', 'prnue', '--older-than', '1d'])).toMatch(/Unknown command 'prnue': did you mean prune\?/);
  });

  it('enrich with no input says to give the CSV path or - for stdin', async () => {
    for (const args of [['enrich'], ['enrich', '--sandbox', '--with', 'mx']]) {
      expect(await refusal(args)).toBe(
        "lead-enrich: Give the CSV file to enrich, or - to read it from standard input: lead-enrich enrich contacts.csv. Run 'lead-enrich --help' for usage. (code: usage)",
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

describe('messages in words, each through the one writer', () => {
  it('a positional\'s wrong choice names the rule and what was typed, not yargs\' "Invalid values: Argument: kind"', async () => {
    expect(await refusal(['lookup', 'phone', '123'])).toBe(
      "lead-enrich: Invalid <kind>: must be email, url or domain, got 'phone'. Run 'lead-enrich --help' for usage. (code: usage)",
    );
  });

  it('a missing required option is named as typed, with what it is for', async () => {
    expect(await refusal(['store', 'prune'])).toBe(
      "lead-enrich: Missing option --older-than: say how old the answers to delete are: lead-enrich store prune --older-than 90d. Run 'lead-enrich --help' for usage. (code: usage)",
    );
  });

  it('an output that would overwrite the input says so in words, with no placeholder left', async () => {
    const small = writeCsv(path.join(dir, 'small.csv'), [['email'], ['ann@acme.com']]);
    const line = await refusal(['enrich', small, '-o', small]);
    expect(line).toBe(`lead-enrich: --output would overwrite the input (${small}): choose another path (code: config)`);
    expect(line).not.toMatch(/<\w+>/);
  });

  it('a token too short to be real is one line at the start, and no request is made', async () => {
    const before = sandbox.stats.requests;
    const r = await runCli(['enrich', contacts, '-o', path.join(dir, 'short-token.csv')], { env: { ...env, LEAD_API_TOKEN: 'x' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'lead-enrich: The API token from LEAD_API_TOKEN is 1 character long: a real token has at least 16; set the token the Lead Lookup API gave you (or try --sandbox) (code: config)\n',
    );
    expect(sandbox.stats.requests).toBe(before);
  });

  // Not on Windows: it has no POSIX permission bits.
  it.runIf(process.platform !== 'win32')('the warning about a config file others can read is stamped and prefixed like every other line', async () => {
    const config = path.join(dir, 'readable.json');
    fs.writeFileSync(config, JSON.stringify({ token: sandbox.token, baseUrl: sandbox.baseUrl }), { mode: 0o644 });
    fs.chmodSync(config, 0o644);
    const r = await runCli(['account', '--config', config], { env: {} });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z lead-enrich: the config file ${config.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} holds a token and is readable by other users \\(everyone\\); run: chmod 600 `,
        'm',
      ),
    );
    expect(r.stderr).not.toContain(sandbox.token);
  });

  it('a short token is masked only where it stands whole (not "pro***y"); a real one wherever it appears', () => {
    expect(maskToken('proxy refused x', 'x')).toBe('proxy refused ***');
    expect(maskToken('tok=abc; abcd', 'abc')).toBe('tok=***; abcd');
    const token = 'tok-SECRET-0123456789';
    expect(maskToken(`token ${token} refused; Bearer ${token}.`, token)).toBe('token *** refused; Bearer ***.');
    expect(maskToken(`token=a${token}b`, token)).toBe('token=a***b');
  });

  it('store stats and store check give the same size', async () => {
    const store = path.join(dir, 'sized.sqlite');
    const run = await runCli(['enrich', contacts, '-o', path.join(dir, 'sized.csv'), '--store', store, '-q'], { env });
    expect(run.code, run.stderr).toBe(0);
    const stats = await runCli(['store', 'stats', '--store', store, '--json'], { env });
    const check = await runCli(['store', 'check', '--store', store, '--json'], { env });
    const sizeOf = (out: string) => (JSON.parse(out) as { sizeBytes: number }).sizeBytes;
    expect(sizeOf(stats.stdout)).toBeGreaterThan(0);
    expect(sizeOf(check.stdout)).toBe(sizeOf(stats.stdout));
  });
});

describe('the summary and the lines around it', () => {
  it('a re-run whose refused keys the store answers looks up no row: no "2 rows looked up" beside "Requests: 0", and "1 row"', async () => {
    const store = path.join(dir, 'refused.sqlite');
    const input = writeCsv(path.join(dir, 'refused.csv'), [['email'], ['reject1@acme.com'], ['reject2@acme.com'], ['ann@acme.com']]);
    const first = await runCli(['enrich', input, '-o', path.join(dir, 'refused.out.csv'), '--store', store], { env });
    expect(first.code, first.stderr).toBe(5);
    expect(first.stderr).toContain('Done: 2 rows hold keys that are malformed or refused by the API (exit 5)');
    const again = await runCli(['enrich', input, '-o', path.join(dir, 'refused.out.csv'), '--store', store], { env });
    expect(again.code, again.stderr).toBe(5);
    expect(again.stderr).toMatch(/Z Requests: 0 /);
    expect(again.stderr).toMatch(/Z Time: \S+ \(no row looked up\)$/m);
    expect(again.stderr).toMatch(/Z Fill rate of the row found: /);
  });

  it('a run whose lookups take under a second gives no rate beside their time (none over a floored second)', async () => {
    const r = await runCli(['enrich', contacts, '-o', path.join(dir, 'quick.csv'), '--store', path.join(dir, 'quick.sqlite')], { env });
    expect(r.code, r.stderr).toBe(0);
    const time = /Z (Time: .*)$/m.exec(r.stderr)?.[1];
    expect(time).toMatch(/^Time: \S+ \(5 rows looked up in \d+ms\)$/);
  });

  it('says at once, in one line, that the credit reserve stopped the lookups, before the run ends', async () => {
    const poor = await startSandbox({ port: 0, rpm: 60_000, credits: 140, threshold: 100 });
    try {
      const input = writeCsv(path.join(dir, 'poor.csv'), [['email'], ...emails(30, 'poor').map((e) => [e])]);
      const r = await runCli(['enrich', input, '-o', path.join(dir, 'poor.out.csv'), '--store', path.join(dir, 'poor.sqlite')], {
        env: { LEAD_API_BASE_URL: poor.baseUrl, LEAD_API_TOKEN: poor.token },
      });
      expect(r.code, r.stderr).toBe(3);
      const lines = r.stderr.split('\n');
      const said = lines.findIndex((line) =>
        /Z lead-enrich: No more lookups: the credit balance reached the reserve \(100 credits\) or the API answered 402; the rows not looked up are written as skipped \(credit_reserve\)\. Add credits and run the same command again to finish$/.test(
          line,
        ),
      );
      expect(said, r.stderr).toBeGreaterThanOrEqual(0);
      expect(lines.filter((line) => line.includes('No more lookups'))).toHaveLength(1);
      expect(said).toBeLessThan(lines.findIndex((line) => line.includes('Stopped early at the credit reserve (exit 3).')));
    } finally {
      await poor.close();
    }
  });
});

describe('a dry run', () => {
  it('says the time needed in units that fit, never "about 0.05 minutes"', async () => {
    const r = await runCli(['enrich', contacts, '--dry-run'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Time needed: about 1s at 60000 RPM$/m);
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

/** util-linux's `script` (Debian: bsdutils), for a real 80-column pseudo-terminal. */
const HAS_SCRIPT = runSync('script', ['--version']).stdout?.includes('util-linux') ?? false;

// Skipped only without util-linux `script`: .ci/run installs it (bsdutils), so CI runs it.
describe.skipIf(!HAS_SCRIPT)('--help in an 80-column terminal', () => {
  it('puts each example command on a line of its own, whole, and labels the number options [number]', () => {
    const r = runSync('script', ['-qec', `stty cols 80; node ${CLI_PATH} enrich --help`, '/dev/null'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm' },
    });
    const help = r.stdout.replace(/\r/g, '');
    expect(r.status, help).toBe(0);
    for (const line of help.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    const lines = help.split('\n');
    const examples = lines.slice(lines.indexOf('Examples:') + 1, lines.indexOf('', lines.indexOf('Examples:')));
    const commands = examples.filter((line) => /^ {2}\S/.test(line)).map((line) => line.trim());
    expect(commands.length).toBeGreaterThanOrEqual(12);
    for (const command of commands) expect(command).toMatch(/^(lead-enrich|cat) /);
    expect(commands).toContain('lead-enrich enrich crm.csv --fill "Title=lead_title,Company=lead_company_name"');
    expect(commands).toContain('lead-enrich enrich big.csv --shard 1/4 --redis "$REDIS_URL"');
    for (const option of ['--rpm', '--concurrency', '--min-credits', '--retries', '--rate-window', '--request-timeout']) {
      const at = lines.findIndex((line) => line.trimStart().startsWith(`${option} `));
      const label = lines
        .slice(at, at + 3)
        .join(' ')
        .match(/\[(string|number)\]/)?.[1];
      expect(label, option).toBe('number');
    }
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
      runChecked(
        'bash',
        [
          '-c',
          `source <(lead-enrich completion bash); COMP_WORDS=(${words.join(' ')}); COMP_CWORD=${words.length - 1}; _lead-enrich_yargs_completions; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        {
          env: { PATH: `${shim()}:${process.env.PATH}`, HOME: process.env.HOME },
        },
      ).trim();
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

  it("completes the values of --by, --with, --format (store export's its own) and a workbook's --sheet, offers no bogus --o, and leaves a path to the shell", async () => {
    const complete = (words: string[]) =>
      runChecked(
        'bash',
        [
          '-c',
          `source <(lead-enrich completion bash); COMP_WORDS=(${words.join(' ')}); COMP_CWORD=${words.length - 1}; _lead-enrich_yargs_completions; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        {
          env: { PATH: `${shim()}:${process.env.PATH}`, HOME: process.env.HOME },
          cwd: dir,
        },
      )
        .trim()
        .split('\n');
    expect(complete(['lead-enrich', 'enrich', 'x.csv', '--by', "''"])).toEqual(['email', 'url', 'domain']);
    expect(complete(['lead-enrich', 'enrich', 'x.csv', '--by', 'email,'])).toEqual(['email,url', 'email,domain']);
    expect(complete(['lead-enrich', 'enrich', 'x.csv', '--with', 'mx,c'])).toEqual(['mx,company']);
    expect(complete(['lead-enrich', 'enrich', 'x.csv', '--format', 'j'])).toEqual(['jsonl']);
    expect(complete(['lead-enrich', 'enrich', 'x.csv', '--format', "''"])).toEqual(['csv', 'jsonl', 'xlsx']);
    // store export writes no workbook.
    expect(complete(['lead-enrich', 'store', 'export', '--format', "''"])).toEqual(['csv', 'jsonl']);
    const workbook = path.join(REPO_ROOT, 'fixtures', 'input', 'workbook-types.xlsx');
    expect(complete(['lead-enrich', 'enrich', workbook, '--sheet', "''"])).toEqual(['Contacts', 'Other']);
    const options = complete(['lead-enrich', 'enrich', 'x.csv', '--']);
    expect(options).toContain('--output');
    expect(options.filter((o) => /^--.$/.test(o))).toEqual([]);
    // After -o nothing is offered (not the option names): the script's `complete -o default` then
    // has bash complete file names.
    expect(complete(['lead-enrich', 'enrich', 'x.csv', '-o', 'cont'])).toEqual(['']);
    expect(complete(['lead-enrich', 'enrich', 'x.csv', '--json', '--'])).toContain('--output');
  });

  it('refuses in words a $SHELL it has no script for (fish), instead of writing the bash script', async () => {
    const r = await runCli(['completion'], { env: { SHELL: '/usr/bin/fish' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      "lead-enrich: No completion script for fish (your $SHELL): lead-enrich writes one for bash or zsh; name it: lead-enrich completion bash. Run 'lead-enrich --help' for usage. (code: usage)",
    );
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

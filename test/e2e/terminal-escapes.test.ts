// Data never drives the terminal: escape sequences in header names (CSV and .xlsx), report
// footers, the API's messages (401, 403), the account's strings and a value typed on stdin reach
// stderr and text stdout escaped (`\x1b`, `\u009b`), JSON outputs escape C1 as they do C0, and an
// echoed value is cut. Checked on the bytes the CLI writes, through pipes and under a pseudo-terminal.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_PATH, lines, runCli, tempDir } from '../helpers/cli.js';
import { writeCsv } from '../helpers/files.js';
import { run, runSync } from '../helpers/processes.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';
import { workbookOf } from '../helpers/zip.js';

/** The clipboard write (OSC 52), a screen clear, and C1's CSI doing the same. */
const HOSTILE = '\x1b]52;c;SGVsbG8=\x07\x1b[2J\u009b2J';
/** How HOSTILE is shown. */
const SHOWN = '\\x1b]52;c;SGVsbG8=\\x07\\x1b[2J\\u009b2J';
/** Any control character but a line feed: none may reach a pipe. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

const startSandbox = sandboxesPerTest();
const TOKEN = 'tok-terminal-escapes-0123456789';

/** A server that answers the account reads with HOSTILE in its strings, and every lookup with `lookup`. */
async function hostileServer(lookup: { status: number; message: string }): Promise<{ baseUrl: string; close(): void }> {
  const answers: Record<string, unknown> = {
    '/v2/account/myplans': { current_plan: { name: `Growth${HOSTILE}`, status: 'active', type: 'subscription', charge: `$49${HOSTILE}` }, addons: [] },
    '/v2/account/credits': {
      total_remaining_credits: 1000,
      plan_remaining_credits: { 'pay-as-you-go': 1000, subscription: 0, bonus: 0 },
      low_credit_balance_min_threshold: 0,
    },
    '/v2/account/limits': {
      email_verify: {
        api_rate_limit: { total: '600 RPM', remaining: '600 RPM', next_limit_reset: `soon${HOSTILE}` },
        bulk_verify_concurrency_limit: { total: '1', remaining: '1' },
      },
    },
  };
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url!, 'http://x').pathname;
    res.setHeader('content-type', 'application/json');
    const data = answers[pathname];
    if (data !== undefined) return res.end(JSON.stringify({ status: 'success', data }));
    res.statusCode = lookup.status;
    res.end(JSON.stringify({ status: 'failed', error: { code: lookup.status === 403 ? 1008 : 1001, message: lookup.message } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  opened.push(server);
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2`, close: () => server.close() };
}
const opened: http.Server[] = [];
afterEach(() => {
  for (const server of opened.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

function expectEscaped(text: string): void {
  expect(text).not.toMatch(RAW_CONTROL);
  expect(text).toContain(SHOWN);
}

/** util-linux's `script` (Debian: bsdutils) gives the CLI a pseudo-terminal; macOS's takes other flags. */
const HAS_SCRIPT = runSync('script', ['--version']).stdout?.includes('util-linux') ?? false;

/**
 * Runs the CLI under a pseudo-terminal at 80 columns; everything the terminal received, as bytes
 * (read as UTF-8 by test/helpers/processes.ts and encoded back: ESC, BEL and C1's CSI, C2 9B, come
 * through as they were sent).
 */
async function underTerminal(args: string, env: Record<string, string>): Promise<{ code: number | null; screen: Buffer }> {
  const command = `stty cols 80; "${process.execPath}" "${CLI_PATH}" ${args}`;
  const r = await run('script', ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', ...env },
    stdin: 'ignore',
    timeoutMs: Infinity,
  });
  return { code: r.code, screen: Buffer.from(r.stdout + r.stderr) };
}

/** What a terminal must never be sent from data: ESC ] (OSC), ESC [2J, BEL, and C1's CSI (UTF-8 C2 9B). */
function expectNoHostileBytes(screen: Buffer): void {
  expect(screen.includes('\x1b]')).toBe(false);
  expect(screen.includes('\x1b[2J')).toBe(false);
  expect(screen.includes(0x07)).toBe(false);
  expect(screen.includes(Buffer.from([0xc2, 0x9b]))).toBe(false);
}

describe('header names', () => {
  it('a CSV header with escape sequences is named escaped in a refusal, in one line', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['email', `x${HOSTILE}`, 'line\nfeed'],
      ['jane@acme.com', '1', '2'],
    ]);
    const sb = await startSandbox();
    const r = await runCli(['enrich', input, '--fill', 'q=lead_name'], { env: { LEAD_API_BASE_URL: sb.baseUrl, LEAD_API_TOKEN: sb.token } });
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toHaveLength(1);
    expectEscaped(r.stderr);
    // The fatal line folds line breaks into a space, as it does a multi-line message of the API's.
    expect(r.stderr).toContain('line feed');
  });

  it("an .xlsx header's _x001B_ is a real ESC in the data, and shown escaped", async () => {
    const dir = tempDir();
    const rows =
      '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row><row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" t="s"><v>3</v></c></row>';
    const header = 'x_x001B_]52;c;SGVsbG8=_x0007__x001B_[2J\u009b2J';
    const input = path.join(dir, 'in.xlsx');
    fs.writeFileSync(input, workbookOf(rows, `<si><t>email</t></si><si><t>${header}</t></si><si><t>jane@acme.com</t></si><si><t>1</t></si>`));
    const sb = await startSandbox();
    const r = await runCli(['enrich', input, '--fill', 'q=lead_name'], { env: { LEAD_API_BASE_URL: sb.baseUrl, LEAD_API_TOKEN: sb.token } });
    expect(r.code).toBe(1);
    expectEscaped(r.stderr);
  });
});

// Skipped without util-linux's script (Debian: bsdutils; .ci/run installs it): it gives the CLI
// the pseudo-terminal these checks read; the pipe checks above run everywhere.
describe.skipIf(!HAS_SCRIPT)(
  'what a terminal receives',
  { meta: { skipReason: "no util-linux script on PATH (Debian: bsdutils): the pseudo-terminal's checks" } },
  () => {
    it('a report footer and an output named with escape sequences: the warning and the summary show them escaped', async () => {
      const dir = tempDir();
      const input = path.join(dir, 'report.csv');
      fs.writeFileSync(input, `email,name\njane@acme.com,Jane\n\nReport${HOSTILE}\n`);
      const sb = await startSandbox();
      const env = {
        LEAD_API_BASE_URL: sb.baseUrl,
        LEAD_API_TOKEN: sb.token,
        LEAD_ENRICH_STORE: path.join(dir, 's.sqlite'),
        OUT: path.join(dir, `out${HOSTILE}.csv`),
      };
      const r = await underTerminal(`enrich "${input}" -o "$OUT" --yes`, env);
      expect(r.code).toBe(0);
      const screen = r.screen.toString('utf8');
      expect(screen).toContain(`("Report${SHOWN}")`);
      expect(screen).toContain(`Output: ${path.join(dir, `out${SHOWN}.csv`)}`);
      expectNoHostileBytes(r.screen);
      // The file is named as it was given: only its name on the screen is escaped.
      expect(fs.existsSync(env.OUT)).toBe(true);
    });

    it("a 401 during a run: the API's message is shown escaped", async () => {
      const dir = tempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['jane@acme.com']]);
      const server = await hostileServer({ status: 401, message: `bad token${HOSTILE}` });
      const r = await underTerminal(`enrich "${input}" --yes`, {
        LEAD_API_BASE_URL: server.baseUrl,
        LEAD_API_TOKEN: TOKEN,
        LEAD_ENRICH_STORE: path.join(dir, 's.sqlite'),
      });
      expect(r.code).toBe(1);
      expect(r.screen.toString('utf8')).toContain(`bad token${SHOWN}`);
      expectNoHostileBytes(r.screen);
    });

    it("the account's strings in the account table", async () => {
      const server = await hostileServer({ status: 401, message: '' });
      const r = await underTerminal('account', { LEAD_API_BASE_URL: server.baseUrl, LEAD_API_TOKEN: TOKEN });
      expect(r.code).toBe(0);
      expect(r.screen.toString('utf8')).toContain(`Growth${SHOWN}`);
      expectNoHostileBytes(r.screen);
    });
  },
);

describe("the API's messages and the account's strings through pipes", () => {
  it('401 and 403 answers: one fatal line, the message escaped', async () => {
    for (const status of [401, 403]) {
      const server = await hostileServer({ status, message: `no${HOSTILE}\r\nsecond line` });
      const r = await runCli(['lookup', 'email', 'jane@acme.com'], { env: { LEAD_API_BASE_URL: server.baseUrl, LEAD_API_TOKEN: TOKEN } });
      expect(r.code).toBe(1);
      expect(lines(r.stderr)).toHaveLength(1);
      expectEscaped(r.stderr);
    }
  });

  it('account: the table escapes them; --json escapes C1 as JSON does C0, and reads back the same', async () => {
    const server = await hostileServer({ status: 401, message: '' });
    const env = { LEAD_API_BASE_URL: server.baseUrl, LEAD_API_TOKEN: TOKEN };
    const text = await runCli(['account'], { env });
    expect(text.code).toBe(0);
    expectEscaped(text.stdout);
    expect(text.stdout).toContain(`resets soon${SHOWN}`);
    const json = await runCli(['account', '--json'], { env });
    expect(json.stdout).not.toMatch(RAW_CONTROL);
    expect(json.stdout).toContain('\\u001b]52;c;SGVsbG8=\\u0007\\u001b[2J\\u009b2J');
    expect(JSON.parse(json.stdout).plans.current_plan.name).toBe(`Growth${HOSTILE}`);
  });
});

/** A header or message that reads in another order than it holds (RLO, the isolates, the marks) or hides a character. */
const BIDI = 'x\u202eliame\u2066a\u2067b\u2068c\u2069\u200e\u200f\u061c\u200b';
const BIDI_SHOWN = 'x\\u202eliame\\u2066a\\u2067b\\u2068c\\u2069\\u200e\\u200f\\u061c\\u200b';
/** Bidi controls and the invisible format controls: none may reach stderr as they are. */
const RAW_FORMAT = /[\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/;

describe('bidi and invisible format controls', () => {
  it('a header holding them is named escaped in a refusal', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [
      ['email', BIDI],
      ['jane@acme.com', '1'],
    ]);
    const sb = await startSandbox();
    const r = await runCli(['enrich', input, '--fill', 'q=lead_name'], { env: { LEAD_API_BASE_URL: sb.baseUrl, LEAD_API_TOKEN: sb.token } });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(RAW_FORMAT);
    expect(r.stderr).toContain(BIDI_SHOWN);
  });

  it('an API message holding them: the fatal line shows them escaped, and --json the same line', async () => {
    const server = await hostileServer({ status: 403, message: `denied ${BIDI}` });
    const env = { LEAD_API_BASE_URL: server.baseUrl, LEAD_API_TOKEN: TOKEN };
    const r = await runCli(['lookup', 'email', 'jane@acme.com'], { env });
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr).not.toMatch(RAW_FORMAT);
    expect(r.stderr).toContain(`denied ${BIDI_SHOWN}`);
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['jane@acme.com']]);
    const json = await runCli(['enrich', input, '--json'], { env: { ...env, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') } });
    expect(json.code).toBe(1);
    expect(json.stderr).not.toMatch(RAW_FORMAT);
    expect(json.stdout).not.toMatch(RAW_FORMAT);
    // The JSON's message is the fatal line's, as shown.
    expect(JSON.parse(json.stdout).error.message).toContain(`denied ${BIDI_SHOWN}`);
  });
});

describe('a value typed on stdin', () => {
  it('lookup email - with a megabyte on one line: refused in one short line, the value cut and escaped', async () => {
    const r = await runCli(['lookup', 'email', '-', '--sandbox'], { input: `${HOSTILE}${'a'.repeat(1024 * 1024)}\n` });
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toHaveLength(1);
    expect(r.stderr.length).toBeLessThan(300);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(r.stderr).toMatch(
      /^lead-enrich: Invalid email on standard input: its first line is longer than 64 KiB, beginning '\\x1b\]52;c;SGVsbG8=\\x07\\x1b\[2J\\u009b2Jaaa+'\.\.\.; no request was made \(code: invalid_input\)\n$/,
    );
  });

  it('an invalid value is echoed cut to 200 characters, with its length', async () => {
    const r = await runCli(['lookup', 'email', '-', '--sandbox'], { input: `${'b'.repeat(5000)}@acme.com\n` });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `lead-enrich: Invalid email '${'b'.repeat(200)}…' (5,009 characters): email is longer than 254 characters; no request was made (code: invalid_input)\n`,
    );
  });
});

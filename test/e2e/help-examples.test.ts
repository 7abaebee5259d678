// Every example that `--help` shows, of every command, run as written: read from the
// help text itself (the Examples section, its wrapped lines joined back), typed into bash with
// `lead-enrich` on the PATH, in a folder holding the files the examples name, against a sandbox
// on 127.0.0.1 (LEAD_API_BASE_URL / LEAD_API_TOKEN, as the examples' descriptions say) and a
// redis-server for the --redis example. Each must exit 0 and not end with "nothing to do".
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { CLI_PATH, REPO_ROOT, tempDir } from '../helpers/cli.js';
import { emails, writeCsv } from '../helpers/files.js';
import { REDIS_MISSING, startRedis, type RedisServer } from '../helpers/redis.js';
import { hangBound, runSync, start } from '../helpers/processes.js';
import { openSqliteFile } from '../helpers/sqlite.js';

interface Example {
  command: string;
  description: string;
  from: string;
}

/** `lead-enrich <command> --help`, as a user's shell gets it (no terminal: yargs wraps at 100). */
const helps = new Map<string, string>();

function help(command: string[]): string {
  const known = helps.get(command.join(' '));
  if (known !== undefined) return known;
  const r = runSync(process.execPath, [CLI_PATH, ...command, '--help'], { env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  expect(r.status, r.stderr).toBe(0);
  helps.set(command.join(' '), r.stdout);
  return r.stdout;
}

/** The lines of a section ("Examples:", "Commands:") up to the next blank line. */
function section(text: string, title: string): string[] {
  const lines = text.split('\n');
  const start = lines.indexOf(`${title}:`);
  if (start < 0) return [];
  const end = lines.findIndex((line, i) => i > start && line.trim() === '');
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** A program the examples start with: a new row of the section. */
const STARTS = /^(lead-enrich|cat|echo) /;

/**
 * The examples as --help lays them out: each command on a line of its own (two spaces in), its
 * description on the lines below it (further in). A command is never broken across lines.
 */
function examples(command: string[]): Example[] {
  const lines = section(help(command), 'Examples');
  const rows: Example[] = [];
  for (const line of lines) {
    const text = line.trim();
    if (/^ {2}\S/.test(line)) {
      expect(text, `${command.join(' ')}: an example that is no command`).toMatch(STARTS);
      rows.push({ command: text, description: '', from: command.join(' ') || '(top)' });
    } else rows.at(-1)!.description = `${rows.at(-1)!.description} ${text}`.trim();
  }
  return rows;
}

/** Every command with its help, from the top-level "Commands:" section down (store's subcommands too). */
function commands(parent: string[] = []): string[][] {
  const rows = section(help(parent), 'Commands').map((line) => /^ {2}lead-enrich ((?:\S+ )*?\S+)(?: [<[]|\s{2,}|$)/.exec(line)?.[1]?.split(' ') ?? []);
  const found = rows.filter((words) => words.length === parent.length + 1 && words.slice(0, parent.length).join(' ') === parent.join(' '));
  return found.flatMap((words) => [words, ...commands(words)]);
}

let sandbox: Sandbox;
let redis: RedisServer | undefined;
let cwd: string;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  [sandbox, redis] = await Promise.all([startSandbox({ port: 0, rpm: 60_000 }), REDIS_MISSING === undefined ? startRedis() : undefined]);
  cwd = tempDir('lead-enrich-examples-');
  const home = tempDir('lead-enrich-home-');
  const bin = tempDir('lead-enrich-bin-');
  fs.writeFileSync(path.join(bin, 'lead-enrich'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`, { mode: 0o755 });
  // HOME is a fresh one: the default store and ~/.bashrc of the examples are the test's own.
  env = {
    PATH: `${bin}:${process.env.PATH}`,
    HOME: home,
    LEAD_API_BASE_URL: sandbox.baseUrl,
    LEAD_API_TOKEN: sandbox.token,
    ...(redis ? { REDIS_URL: redis.url } : {}),
  };
  const people = emails(12).map((e, i) => [e, `https://www.linkedin.com/in/person-${i}`]);
  for (const name of ['contacts.csv', 'in.csv', 'big.csv', 'nightly.csv']) writeCsv(path.join(cwd, name), [['email'], ...people.map(([e]) => [e!])]);
  writeCsv(path.join(cwd, 'leads.csv'), [['Name', 'Person Linkedin Url'], ...people.map(([, url], i) => [`P${i}`, url!])]);
  // A CRM export with its own columns half filled (the --fill example), and a workbook with a sheet named Leads.
  writeCsv(path.join(cwd, 'crm.csv'), [
    ['Email', 'LinkedIn', 'Title', 'Company'],
    ...people.map(([e, url], i) => [e!, url!, i % 3 === 0 ? 'CEO' : '', i % 2 === 0 ? 'Acme' : '']),
  ]);
  const workbook = new ExcelJS.Workbook();
  workbook.addWorksheet('Notes').addRow(['nothing here']);
  const leads = workbook.addWorksheet('Leads');
  leads.addRow(['Name', 'Email']);
  people.forEach(([e], i) => {
    leads.addRow([`P${i}`, e!]);
  });
  await workbook.xlsx.writeFile(path.join(cwd, 'leads.xlsx'));
  fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'input', 'excel-de-semicolon-windows1252.csv'), path.join(cwd, 'export.csv'));
  // A report export with three title lines above its header (the --skip-lines example).
  fs.writeFileSync(
    path.join(cwd, 'report.csv'),
    ['Contacts report', 'Generated 2026-11-27', '', 'Name,Email', ...people.map(([e], i) => `P${i},${e!}`)].join('\n') + '\n',
  );
}, hangBound(30_000));
afterAll(async () => {
  await Promise.all([sandbox?.close(), redis?.stop()]);
});

/** Runs an example in bash (asynchronously: the sandbox answering it lives in this process). */
function shell(command: string, options: { terminalInput?: string } = {}): Promise<{ code: number | null; output: string }> {
  const args = options.terminalInput === undefined ? ['-c', command] : ['-c', `script -qfec ${JSON.stringify(command)} /dev/null`];
  const child = start('bash', args, { cwd, env, input: options.terminalInput ?? '', timeoutMs: 60_000 });
  let output = '';
  child.stdout!.on('data', (chunk: string) => (output += chunk));
  child.stderr!.on('data', (chunk: string) => (output += chunk));
  return child.result.then(({ code }) => ({ code, output }));
}

/** A server example: it must come up, and stop cleanly on Ctrl-C. */
async function serve(command: string): Promise<{ code: number | null; output: string }> {
  const child = start('bash', ['-c', command], { cwd, env, stdin: 'ignore', timeoutMs: 60_000, ownGroup: true });
  let output = '';
  child.stdout!.on('data', (chunk: string) => (output += chunk));
  child.stderr!.on('data', (chunk: string) => (output += chunk));
  const closed = child.result.then(({ code }) => code);
  const deadline = Date.now() + 15_000;
  while (!/Sandbox listening on/.test(output) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (child.exitCode === null) process.kill(-child.pid!, 'SIGINT');
  return { code: await closed, output };
}

/** The default store, the sandbox's and a copy named ./results.sqlite, every answer 40 days old: their bytes, to put back before each store example. */
function agedStores(): Map<string, Buffer> {
  const cache = path.join(env.HOME!, '.cache', 'lead-enrich');
  const files = [path.join(cache, 'results.sqlite'), path.join(cache, 'results.sandbox.sqlite')];
  for (const file of files) {
    const db = openSqliteFile(file);
    db.run('UPDATE results SET fetched_at = fetched_at - ?', 40 * 86_400_000);
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.close();
  }
  fs.copyFileSync(files[0]!, path.join(cwd, 'results.sqlite'));
  return new Map([...files, path.join(cwd, 'results.sqlite')].map((file) => [file, fs.readFileSync(file)]));
}

async function portFree(port: number): Promise<boolean> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** What an example needs that this machine lacks (it is then not run, and the run says so), if anything. */
function missingTool(example: Example): string | undefined {
  const onPath = (command: string) => runSync('sh', ['-c', `command -v ${command}`]).status === 0;
  if (/--redis\b/.test(example.command)) return REDIS_MISSING;
  if (/\| jq /.test(example.command) && !onPath('jq')) return 'no jq on PATH (Debian: jq)';
  if (/asks first/.test(example.description) && !onPath('script')) return 'no util-linux script on PATH (Debian: bsdutils)';
  return undefined;
}

describe('every --help example runs as written', () => {
  it(
    'each command of --help shows examples, read back whole',
    () => {
      const all = [[], ...commands()];
      expect(all.map((c) => c.join(' '))).toEqual(
        expect.arrayContaining([
          'enrich',
          'lookup',
          'mx',
          'whois',
          'account',
          'store',
          'store stats',
          'store prune',
          'store clear',
          'store check',
          'sandbox',
          'completion',
        ]),
      );
      for (const command of all.filter((c) => c[0] !== 'completion')) expect(examples(command).length, command.join(' ')).toBeGreaterThan(0);
      // Wrapped lines are joined back into the command as typed.
      expect(examples(['enrich']).map((e) => e.command)).toContain('lead-enrich enrich leads.csv --by url --column "Person Linkedin Url"');
    },
    hangBound(60_000),
  );

  it(
    'and each one exits 0 and does what it says',
    async () => {
      const seen = new Set<string>();
      const list = [[], ...commands()].flatMap((command) => examples(command)).filter((e) => !seen.has(e.command) && seen.add(e.command));
      // Store examples after the runs that fill the stores, `store clear` last; the servers at the end.
      const order = (e: Example) =>
        / sandbox( |$)/.test(e.command) && e.command.startsWith('lead-enrich sandbox')
          ? 3
          : /store clear/.test(e.command)
            ? 2
            : /lead-enrich store/.test(e.command)
              ? 1
              : 0;
      list.sort((a, b) => order(a) - order(b));
      const failures: string[] = [];
      let stores: Map<string, Buffer> | undefined;
      for (const example of list) {
        // Each store example meets the stores the runs filled, their answers made 40 days old (so
        // that every prune has something to remove), and `--store ./results.sqlite` a copy of them.
        if (order(example) >= 1) {
          stores ??= agedStores();
          for (const [file, bytes] of stores) {
            for (const extra of ['-wal', '-shm']) fs.rmSync(`${file}${extra}`, { force: true });
            fs.writeFileSync(file, bytes);
          }
        }
        const missing = missingTool(example);
        if (missing !== undefined) {
          console.warn(`${missing}: "${example.command}" not run`);
          continue;
        }
        let result: { code: number | null; output: string };
        if (order(example) === 3) {
          if (/--port 8080/.test(example.command) && !(await portFree(8080))) {
            console.warn(`port 8080 is in use on this machine: "${example.command}" not run`);
            continue;
          }
          result = await serve(example.command);
        } else if (/asks first/.test(example.description)) {
          result = await shell(example.command, { terminalInput: 'y\n' });
        } else {
          result = await shell(example.command);
        }
        // "Does what it says": a prune or clear removes entries; no example meets an empty store.
        const nothing =
          /nothing to (prune|clear|show)|No result store yet|Removed 0 /.test(result.output) ||
          (/store (prune|clear)/.test(example.command) && !/Removed [1-9]/.test(result.output));
        if (result.code !== 0 || nothing)
          failures.push(`${example.command}  [${example.from}] → exit ${result.code}\n${result.output.trim().split('\n').slice(-3).join('\n')}`);
      }
      expect(failures, failures.join('\n\n')).toEqual([]);
      expect(list.length).toBeGreaterThan(25);
    },
    hangBound(240_000),
  );
});

// An output never replaces what it names (docs/cli-contract.md, "Never overwritten"; docs/reference.md,
// "Where an output goes"): a link is followed (its target written whole, the link left a link, the
// lock taken on the target); a FIFO or a character device is written as it is (a FIFO's reader gets
// the file, a device stays a device); /dev/stdout is standard output; a socket, a block device or a
// folder is refused in one line before any request. Every node is made in a temporary folder; the
// real /dev/null is only written to.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/server.js';
import { CLI_PATH, lines, runCli, spawnCli, tempDir } from '../helpers/cli.js';
import { emails, readCsvObjects, writeCsv } from '../helpers/files.js';
import { hangBound, run, runChecked } from '../helpers/processes.js';
import { readByExceljs } from '../helpers/workbook-read.js';
import { closeAll, envFor, expectNoCrash, lookupsSeen, sandbox, sleep, until } from './reliability/support.js';

let s: Sandbox;
beforeAll(async () => {
  s = await sandbox();
});
afterAll(closeAll);

const ROOT = process.getuid?.() === 0;
const SIDECAR_HEADER = 'row,email,error_code,error_message\n';
const CHANGES_HEADER = 'row,key,field,before,after,before_fetched_at,after_fetched_at\n';

function contacts(dir: string, n = 3): string {
  return writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(n, 'place').map((e) => [e])]);
}

/** Temporary files a run leaves beside its outputs (it must leave none). */
function leftovers(...dirs: string[]): string[] {
  return dirs.flatMap((dir) => fs.readdirSync(dir).filter((name) => /\.(partial|tmp|lock)$/.test(name)));
}

/** Everything a reader of `fifo` gets, until its writer closes it. */
function readAll(fifo: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    fs.createReadStream(fifo, 'utf8')
      .on('data', (chunk) => (text += chunk))
      .on('end', () => resolve(text))
      .on('error', reject);
  });
}

describe('a name that is a symbolic link', () => {
  it('-o, --errors, --changes and --report through links: each target written whole, each link still a link, nothing left beside them', async () => {
    const dir = tempDir();
    const input = contacts(dir);
    const real = path.join(dir, 'real');
    fs.mkdirSync(real);
    fs.writeFileSync(path.join(real, 'errors.csv'), 'an older sidecar\n');
    // Links to files not made yet (dangling), and to one that is there.
    const names = ['out.csv', 'errors.csv', 'changes.csv', 'report.json'];
    for (const name of names) fs.symlinkSync(path.join('real', name), path.join(dir, name));
    const [out, errors, changes, report] = names.map((name) => path.join(dir, name)) as [string, string, string, string];
    const r = await runCli(['enrich', input, '-o', out, '--errors', errors, '--changes', changes, '--report', report, '--json'], { env: envFor(s, dir) });
    expect(r.code, r.stderr).toBe(0);
    for (const name of names) {
      expect(fs.lstatSync(path.join(dir, name)).isSymbolicLink(), name).toBe(true);
      expect(fs.readlinkSync(path.join(dir, name))).toBe(path.join('real', name));
    }
    expect(readCsvObjects(path.join(real, 'out.csv')).map((row) => row.lead_status)).toEqual(['found', 'found', 'found']);
    expect(fs.readFileSync(path.join(real, 'errors.csv'), 'utf8')).toBe(SIDECAR_HEADER);
    expect(fs.readFileSync(path.join(real, 'changes.csv'), 'utf8')).toBe(CHANGES_HEADER);
    expect(JSON.parse(fs.readFileSync(path.join(real, 'report.json'), 'utf8'))).toMatchObject({ exitStatus: 0 });
    // The summary names the files as given: each is there, and leads to what was written.
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ output: out, errorsFile: errors, changesFile: changes });
    for (const named of [summary.output, summary.errorsFile, summary.changesFile]) expect(fs.existsSync(named), named).toBe(true);
    expect(leftovers(dir, real)).toEqual([]);
  });

  it(
    "the lock is the target's: a second run on the target, by its own name or another link, exits 1 at once naming the target",
    async () => {
      const dir = tempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(240, 'linklock').map((e) => [e])]);
      const target = path.join(dir, 'real.csv');
      fs.symlinkSync('real.csv', path.join(dir, 'a.csv'));
      fs.symlinkSync(target, path.join(dir, 'b.csv'));
      // Answers that take 30-50 ms, two at a time: the first run lasts past the two started against it.
      const slow = await sandbox({ latencyMs: [30, 50] });
      const first = spawnCli(['enrich', input, '-o', path.join(dir, 'a.csv'), '--concurrency', '2', '--quiet'], { env: envFor(slow, dir), timeoutMs: 60_000 });
      first.stdin!.end();
      await until(() => lookupsSeen(slow, 'lookup_email') >= 5 && fs.existsSync(path.join(dir, '.real.csv.lock')), 'the first lookups');
      // Slow answers while the two others start and are refused, however long a loaded machine takes
      // to start them: the first must still hold its lock then (it has most of its keys left).
      slow.setLatency([1_000, 1_200]);
      for (const name of ['real.csv', 'b.csv']) {
        const second = await runCli(['enrich', input, '-o', path.join(dir, name), '--errors', path.join(dir, `${name}.errors.csv`)], {
          env: envFor(s, tempDir()),
        });
        expectNoCrash(second);
        expect(second.code).toBe(1);
        expect(lines(second.stderr)).toEqual([
          expect.stringMatching(
            new RegExp(
              `^lead-enrich: Another lead-enrich run is writing the output ${target.replace(/[.]/g, '\\.')} \\(pid ${first.pid} on .*\\(code: output_locked\\)$`,
            ),
          ),
        ]);
      }
      slow.setLatency([2, 5]);
      const done = await first.result;
      expect(done.code, done.stderr).toBe(0);
      expect(fs.lstatSync(path.join(dir, 'a.csv')).isSymbolicLink()).toBe(true);
      expect(readCsvObjects(target)).toHaveLength(240);
    },
    hangBound(60_000),
  );
});

// Not on Windows, which has no mkfifo; Linux (every CI platform) and macOS have it.
describe.skipIf(process.platform === 'win32')('a FIFO', { meta: { skipReason: 'no mkfifo on Windows' } }, () => {
  it('-o, --errors, --changes and --report at FIFOs with readers: each reader gets its file whole, each FIFO stays a FIFO', async () => {
    const dir = tempDir();
    const input = contacts(dir);
    const fifos = ['out.csv', 'errors.csv', 'changes.csv', 'report.json'].map((name) => path.join(dir, name)) as [string, string, string, string];
    for (const fifo of fifos) runChecked('mkfifo', [fifo]);
    const read = Promise.all(fifos.map(readAll));
    const [out, errors, changes, report] = fifos;
    const r = await runCli(['enrich', input, '-o', out, '--errors', errors, '--changes', changes, '--report', report, '-q'], { env: envFor(s, dir) });
    expect(r.code, r.stderr).toBe(0);
    const [rows, sidecar, changed, reported] = await read;
    expect(rows!.split('\n')[0]).toMatch(/^email,lead_status,/);
    expect(rows!.trim().split('\n')).toHaveLength(4);
    expect(sidecar).toBe(SIDECAR_HEADER);
    expect(changed).toBe(CHANGES_HEADER);
    expect(JSON.parse(reported!)).toMatchObject({ exitStatus: 0 });
    for (const fifo of fifos) expect(fs.statSync(fifo).isFIFO()).toBe(true);
    expect(leftovers(dir)).toEqual([]);
  });

  it('an .xlsx output at a FIFO: its zip is written front to back as the rows come, and its reader gets a whole workbook', async () => {
    const dir = tempDir();
    const input = contacts(dir);
    const fifo = path.join(dir, 'out.xlsx');
    runChecked('mkfifo', [fifo]);
    const copy = path.join(dir, 'copy.xlsx');
    const read = new Promise((resolve, reject) => fs.createReadStream(fifo).pipe(fs.createWriteStream(copy)).on('close', resolve).on('error', reject));
    const r = await runCli(['enrich', input, '-o', fifo, '-q'], { env: envFor(s, dir) });
    expect(r.code, r.stderr).toBe(0);
    await read;
    const sheet = (await readByExceljs(copy)).worksheets[0]!;
    expect(sheet.getColumn(2).values.slice(1)).toEqual(['lead_status', 'found', 'found', 'found']);
    expect(fs.statSync(fifo).isFIFO()).toBe(true);
  });

  it(
    'with no reader yet: nothing is looked up until one comes, then the run ends well; SIGINT while it waits: exit 130, nothing looked up',
    async () => {
      const dir = tempDir();
      const input = contacts(dir);
      const changes = path.join(dir, 'changes.fifo');
      runChecked('mkfifo', [changes]);
      const lookups = lookupsSeen(s, 'lookup_email');
      const waiting = spawnCli(['enrich', input, '--changes', changes, '-q'], { env: envFor(s, dir) });
      waiting.stdin!.end();
      // The account is read before the outputs are opened; the lookups wait for the reader.
      const requests = s.stats.requests;
      await until(() => s.stats.requests > requests, 'the account read');
      await sleep(500);
      expect(lookupsSeen(s, 'lookup_email')).toBe(lookups);
      const read = readAll(changes);
      const done = await waiting.result;
      expect(done.code, done.stderr).toBe(0);
      expect(await read).toBe(CHANGES_HEADER);
      expect(lookupsSeen(s, 'lookup_email')).toBe(lookups + 3);

      const interrupted = spawnCli(['enrich', contacts(tempDir()), '--changes', changes], { env: envFor(s, tempDir()) });
      interrupted.stdin!.end();
      const again = s.stats.requests;
      await until(() => s.stats.requests > again, 'the account read');
      await sleep(300);
      interrupted.kill('SIGINT');
      const result = await interrupted.result;
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(130);
      expect(lines(result.stderr).filter((line) => !/SIGINT: stopping/.test(line))).toEqual([
        'lead-enrich: Interrupted while the outputs were opened (a FIFO waits for its reader): nothing was looked up (code: interrupted)',
      ]);
      expect(lookupsSeen(s, 'lookup_email')).toBe(lookups + 3);
      expect(fs.statSync(changes).isFIFO()).toBe(true);
    },
    hangBound(60_000),
  );
});

describe('a device, and standard output by name', () => {
  // mknod of a device needs root (CI runs as root); elsewhere the real /dev/null is checked alone.
  it.runIf(ROOT && process.platform === 'linux')(
    '--errors and --changes at character devices made with mknod: written to, still the same devices',
    { meta: { skipReason: 'not root, or not Linux: no device node can be made' } },
    async () => {
      const dir = tempDir();
      const input = contacts(dir);
      // Major 1, minor 3: what /dev/null is on Linux, made here under names of our own.
      const [errors, changes] = ['errors-null', 'changes-null'].map((name) => path.join(dir, name)) as [string, string];
      for (const node of [errors, changes]) runChecked('mknod', [node, 'c', '1', '3']);
      const identity = (node: string) => {
        const stat = fs.lstatSync(node);
        return [stat.isCharacterDevice(), stat.ino, stat.rdev];
      };
      const before = [errors, changes].map(identity);
      const r = await runCli(['enrich', input, '--errors', errors, '--changes', changes, '--json'], { env: envFor(s, dir) });
      expect(r.code, r.stderr).toBe(0);
      expect([errors, changes].map(identity)).toEqual(before);
      expect(before[0]![0]).toBe(true);
      expect(JSON.parse(r.stdout)).toMatchObject({ errorsFile: errors, changesFile: changes });
      expect(leftovers(dir)).toEqual([]);
    },
  );

  // Not as root: there a build that replaced what it names would replace the machine's /dev/null
  // (the mknod test above covers devices as root); any other user may not write in /dev.
  it.skipIf(ROOT)(
    '--errors /dev/null: written to, still the device it was; two outputs may share it',
    { meta: { skipReason: 'root: the device nodes made with mknod stand for /dev/null' } },
    async () => {
      const dir = tempDir();
      const before = fs.statSync('/dev/null');
      const r = await runCli(['enrich', contacts(dir), '--errors', '/dev/null', '--changes', '/dev/null', '-q'], { env: envFor(s, dir) });
      expect(r.code, r.stderr).toBe(0);
      const after = fs.statSync('/dev/null');
      expect([after.isCharacterDevice(), after.ino, after.rdev]).toEqual([true, before.ino, before.rdev]);
      expect(fs.existsSync(path.join(dir, 'in.enriched.csv'))).toBe(true);
    },
  );

  // Through a link of our own to /dev/stdout: a build that replaced what it names would replace
  // that link, never the machine's /dev/stdout.
  it.skipIf(process.platform !== 'linux')(
    '--changes /dev/stdout: into a pipe, and appended to the file stdout was sent to with >> (the JSON summary on stderr)',
    { meta: { skipReason: 'the shell redirections as on Linux' } },
    async () => {
      const dir = tempDir();
      const input = contacts(dir);
      const stdout = path.join(dir, 'stdout');
      fs.symlinkSync('/dev/stdout', stdout);
      const env = { ...envFor(s, dir), PATH: process.env.PATH };
      const command = `"$0" "$1" enrich "$2" --changes "${stdout}" -q --json`;
      const piped = await run('sh', ['-c', `${command} | cat`, process.execPath, CLI_PATH, input], { env });
      expect(piped.code, piped.stderr).toBe(0);
      expect(piped.stdout).toBe(CHANGES_HEADER);
      expect(JSON.parse(piped.stderr)).toMatchObject({ exitCode: 0, changesFile: stdout });
      const log = path.join(dir, 'log.txt');
      fs.writeFileSync(log, 'the night before\n');
      const appended = await run('sh', ['-c', `${command} >> "$3"`, process.execPath, CLI_PATH, input, log], { env });
      expect(appended.code, appended.stderr).toBe(0);
      expect(fs.readFileSync(log, 'utf8')).toBe(`the night before\n${CHANGES_HEADER}`);
      expect(fs.readlinkSync(stdout)).toBe('/dev/stdout');
    },
  );

  it('a socket, a block device, a folder: refused in one line before any request, nothing made', async () => {
    const dir = tempDir();
    const input = contacts(dir);
    const socket = path.join(dir, 'sock.csv');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    fs.mkdirSync(path.join(dir, 'folder.csv'));
    // A block device only where one can be made (root, Linux): never opened, only refused.
    const block = path.join(dir, 'disk.csv');
    if (ROOT && process.platform === 'linux') runChecked('mknod', [block, 'b', '7', '200']);
    try {
      const requests = s.stats.requests;
      const cases: Array<[string[], string]> = [
        [['--changes', socket], `Cannot write ${socket}: it is a socket; choose another path with --changes`],
        [['-o', socket], `Cannot write ${socket}: it is a socket; choose another path with -o / --errors`],
        [
          ['--report', path.join(dir, 'link.json')],
          `Cannot write the report ${path.join(dir, 'link.json')}: it is a socket; choose another path with --report`,
        ],
        [['--errors', path.join(dir, 'folder.csv')], `Cannot write ${path.join(dir, 'folder.csv')}: it is a folder; choose another path with -o / --errors`],
        ...(fs.existsSync(block)
          ? [[['--changes', block], `Cannot write ${block}: it is a block device (a disk); choose another path with --changes`] as [string[], string]]
          : []),
      ];
      fs.symlinkSync(socket, path.join(dir, 'link.json'));
      for (const [args, line] of cases) {
        const r = await runCli(['enrich', input, ...args], { env: envFor(s, dir) });
        expectNoCrash(r);
        expect(r.code).toBe(1);
        expect(lines(r.stderr)).toEqual([`lead-enrich: ${line} (code: unwritable_output)`]);
      }
      expect(s.stats.requests).toBe(requests);
      expect(fs.readdirSync(dir).sort()).toEqual(
        ['disk.csv', 'folder.csv', 'in.csv', 'link.json', 'sock.csv'].filter((name) => name !== 'disk.csv' || fs.existsSync(block)),
      );
      expect(fs.statSync(socket).isSocket()).toBe(true);
    } finally {
      server.close();
    }
  });
});

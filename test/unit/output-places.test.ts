// Where an output's name leads (docs/cli-contract.md, "Never overwritten"): links followed, even to a
// file not made yet (core/real-path.ts); what each kind of name is written as (write/output-place.ts);
// the files no output may be: the store's own (its -wal, -shm, -journal), and one standard output
// taken twice (run/output-files.ts). Nodes are made in temporary folders; /dev/null is only stat'ed.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/api/errors.js';
import { realPathOf } from '../../src/core/real-path.js';
import { assertDistinctFiles } from '../../src/read/index.js';
import { refuseSharedFiles } from '../../src/run/output-files.js';
import { outputPlace, whyNotWritable } from '../../src/write/output-place.js';
import { makeTempDir } from '../helpers/files.js';
import { runChecked } from '../helpers/processes.js';

const refuse = (why: string) => new Error(why);
const place = (name: string) => outputPlace(name, refuse);

describe('realPathOf', () => {
  it('follows a chain of links to a file not made yet, relative links from their own folder', () => {
    const dir = fs.realpathSync(makeTempDir());
    fs.mkdirSync(path.join(dir, 'a'));
    fs.mkdirSync(path.join(dir, 'b'));
    fs.symlinkSync('../b/second', path.join(dir, 'a', 'first'));
    fs.symlinkSync('store.sqlite-wal', path.join(dir, 'b', 'second'));
    expect(realPathOf(path.join(dir, 'a', 'first'))).toBe(path.join(dir, 'b', 'store.sqlite-wal'));
    // A linked folder on the way, and `..`.
    fs.symlinkSync(path.join(dir, 'b'), path.join(dir, 'linked'));
    expect(realPathOf(path.join(dir, 'linked', 'x', '..', 'new.csv'))).toBe(path.join(dir, 'b', 'new.csv'));
    // A folder not made either: as given.
    expect(realPathOf(path.join(dir, 'no', 'such', 'f.csv'))).toBe(path.join(dir, 'no', 'such', 'f.csv'));
  });

  it('a circle of links ends where it is found (opening it then fails: ELOOP)', () => {
    const dir = fs.realpathSync(makeTempDir());
    fs.symlinkSync('two', path.join(dir, 'one'));
    fs.symlinkSync('one', path.join(dir, 'two'));
    expect([path.join(dir, 'one'), path.join(dir, 'two')]).toContain(realPathOf(path.join(dir, 'one')));
    expect(whyNotWritable(Object.assign(new Error('x'), { code: 'ELOOP' }))).toBe('its links lead in a circle');
  });
});

describe('outputPlace', () => {
  it("a new name, a regular file and a link to either: a file, renamed over the link's target", () => {
    const dir = fs.realpathSync(makeTempDir());
    const existing = path.join(dir, 'old.csv');
    fs.writeFileSync(existing, 'x');
    fs.symlinkSync('old.csv', path.join(dir, 'to-old.csv'));
    fs.symlinkSync('sub/new.csv', path.join(dir, 'to-new.csv'));
    expect(place(path.join(dir, 'new.csv'))).toEqual({ how: 'file', name: path.join(dir, 'new.csv'), target: path.join(dir, 'new.csv') });
    expect(place(existing)).toEqual({ how: 'file', name: existing, target: existing });
    expect(place(path.join(dir, 'to-old.csv'))).toEqual({ how: 'file', name: path.join(dir, 'to-old.csv'), target: existing });
    expect(place(path.join(dir, 'to-new.csv'))).toEqual({ how: 'file', name: path.join(dir, 'to-new.csv'), target: path.join(dir, 'sub', 'new.csv') });
  });

  it('a FIFO (through a link too) is written as it is, locked at its real path; a character device as it is', () => {
    const dir = fs.realpathSync(makeTempDir());
    const fifo = path.join(dir, 'pipe');
    runChecked('mkfifo', [fifo]);
    fs.symlinkSync('pipe', path.join(dir, 'to-pipe.csv'));
    expect(place(path.join(dir, 'to-pipe.csv'))).toEqual({ how: 'fifo', name: path.join(dir, 'to-pipe.csv'), target: fifo });
    expect(place('/dev/null')).toEqual({ how: 'device', name: '/dev/null' });
  });

  it('a folder, a socket: refused in the words given, never a file made', async () => {
    const dir = makeTempDir();
    const socket = path.join(dir, 's.sock');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      expect(() => place(dir)).toThrow(/^it is a folder$/);
      expect(() => place(socket)).toThrow(/^it is a socket$/);
    } finally {
      server.close();
    }
  });
});

// In a program's words (the library's): `changes`, `output`; the command line says --changes, --output.
describe("an output is never one of the store's files, nor a second on standard output", () => {
  const refused = (files: Parameters<typeof refuseSharedFiles>[1]): string | undefined => {
    try {
      refuseSharedFiles({}, files);
      return undefined;
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
  };
  const none = { input: undefined, output: undefined, errors: undefined, report: undefined, changes: undefined };

  it('-wal, -shm and -journal beside the store, whether the store is made yet or not, and through a link to the store', () => {
    const dir = fs.realpathSync(makeTempDir());
    const store = path.join(dir, 'X.sqlite');
    for (const [suffix, said] of [
      ['-wal', 'write-ahead log'],
      ['-shm', 'shared-memory index'],
      ['-journal', 'rollback journal'],
    ]) {
      expect(refused({ ...none, store, changes: `${store}${suffix}` })).toBe(
        `changes would overwrite the store's ${said} (${store}${suffix}): choose another path`,
      );
    }
    // The store a link: SQLite keeps its files beside the target, so they are compared there.
    fs.writeFileSync(store, '');
    fs.symlinkSync(store, path.join(dir, 'link.sqlite'));
    expect(refused({ ...none, store: path.join(dir, 'link.sqlite'), output: `${store}-wal` })).toBe(
      `output would overwrite the store's write-ahead log (${store}-wal): choose another path`,
    );
    expect(refused({ ...none, store: path.join(dir, 'link.sqlite'), output: path.join(dir, 'link.sqlite-wal') })).toBeUndefined();
    // A hard link to the log, once the log is there.
    fs.writeFileSync(`${store}-wal`, 'log');
    fs.linkSync(`${store}-wal`, path.join(dir, 'hard.csv'));
    expect(refused({ ...none, store, errors: path.join(dir, 'hard.csv') })).toBe(
      `errors would overwrite the store's write-ahead log (${store}-wal): choose another path`,
    );
    // Names that only look alike pass; a store in memory has no files.
    expect(refused({ ...none, store, output: `${store}-wal.csv`, changes: path.join(dir, 'X-wal') })).toBeUndefined();
    expect(refused({ ...none, store: ':memory:', output: ':memory:-wal' })).toBeUndefined();
  });

  it('two outputs on standard output are refused, unless it is a device (a terminal, /dev/null); a device takes any number', () => {
    // This worker's stdout is what the runner made it: a pipe in CI, a terminal at a desk.
    const twice = refused({ ...none, store: ':memory:', output: '-', changes: '-' });
    if (fs.fstatSync(1).isCharacterDevice()) expect(twice).toBeUndefined();
    else expect(twice).toBe('changes would write into standard output, where output writes: give one of them a file');
    expect(refused({ ...none, store: ':memory:', output: 'out.csv', errors: '/dev/null', changes: '/dev/null' })).toBeUndefined();
    expect(() =>
      assertDistinctFiles([
        { option: '--errors', path: '/dev/null' },
        { option: '--changes', path: '/dev/null' },
      ]),
    ).not.toThrow();
  });
});

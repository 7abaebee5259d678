// The input, the output, the sidecar and the store must be four different files (cli-contract
// "Input files", Never overwritten): compared after resolving links, and by device and inode.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/api/errors.js';
import { assertDistinctFiles } from '../../src/read/index.js';
import { makeTempDir } from '../helpers/files.js';

function workspace() {
  const dir = makeTempDir('lead-enrich-distinct-');
  const input = path.join(dir, 'contacts.csv');
  fs.writeFileSync(input, 'email\na@example.com\n');
  return { dir, input };
}

function clash(files: Array<{ option: string; path: string | undefined }>): string | undefined {
  try {
    assertDistinctFiles(files);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
}

describe('assertDistinctFiles', () => {
  it('four different files pass; - and undefined are not files', () => {
    const { dir, input } = workspace();
    expect(
      clash([
        { option: '<input>', path: input },
        { option: '--output', path: path.join(dir, 'out.csv') },
        { option: '--errors', path: '-' },
        { option: '--store', path: undefined },
        { option: '--other', path: '-' },
      ]),
    ).toBeUndefined();
  });

  it('the same string', () => {
    const { input } = workspace();
    expect(
      clash([
        { option: '<input>', path: input },
        { option: '--errors', path: input },
      ]),
    ).toBe(`--errors would overwrite the input (${input}): choose another path`);
  });

  it('a path through ..', () => {
    const { dir, input } = workspace();
    fs.mkdirSync(path.join(dir, 'a'));
    const roundabout = path.join(dir, 'a', '..', 'contacts.csv');
    expect(
      clash([
        { option: '<input>', path: input },
        { option: '--output', path: roundabout },
      ]),
    ).toBe(`--output would overwrite the input (${input}): choose another path`);
  });

  it('a relative path like ./a/../x.csv', () => {
    const { dir, input } = workspace();
    fs.mkdirSync(path.join(dir, 'a'));
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(
        clash([
          { option: '<input>', path: 'contacts.csv' },
          { option: '--store', path: './a/../contacts.csv' },
        ]),
      ).toBe('--store would overwrite the input (contacts.csv): choose another path');
    } finally {
      process.chdir(cwd);
    }
    expect(
      clash([
        { option: '<input>', path: input },
        { option: '--store', path: path.join(dir, 'contacts.db') },
      ]),
    ).toBeUndefined();
  });

  it('a symbolic link to the input', () => {
    const { dir, input } = workspace();
    const link = path.join(dir, 'link.csv');
    fs.symlinkSync(input, link);
    expect(
      clash([
        { option: '<input>', path: link },
        { option: '--output', path: input },
      ]),
    ).toBe(`--output would overwrite the input (${link}): choose another path`);
  });

  it('a hard link to the input', () => {
    const { dir, input } = workspace();
    const hard = path.join(dir, 'hard.csv');
    fs.linkSync(input, hard);
    expect(
      clash([
        { option: '<input>', path: input },
        { option: '--errors', path: hard },
      ]),
    ).toBe(`--errors would overwrite the input (${input}): choose another path`);
  });

  it('a file reached through a symlinked directory', () => {
    const { dir, input } = workspace();
    const linkedDir = path.join(makeTempDir(), 'linked');
    fs.symlinkSync(dir, linkedDir);
    const through = path.join(linkedDir, 'contacts.csv');
    expect(
      clash([
        { option: '<input>', path: input },
        { option: '--output', path: through },
      ]),
    ).toBe(`--output would overwrite the input (${input}): choose another path`);
  });

  it('an output not made yet, named twice through a symlinked directory', () => {
    const { dir, input } = workspace();
    const linkedDir = path.join(makeTempDir(), 'linked');
    fs.symlinkSync(dir, linkedDir);
    const output = path.join(dir, 'new.enriched.csv');
    const sameOutput = path.join(linkedDir, 'new.enriched.csv');
    expect(fs.existsSync(output)).toBe(false);
    expect(
      clash([
        { option: '<input>', path: input },
        { option: '--output', path: output },
        { option: '--errors', path: sameOutput },
      ]),
    ).toBe(`--errors would overwrite --output (${output}): choose another path`);
    expect(
      clash([
        { option: '<input>', path: input },
        { option: '--output', path: output },
      ]),
    ).toBeUndefined();
  });

  it("SQLite's :memory: store is no file", () => {
    const { input } = workspace();
    expect(
      clash([
        { option: '<input>', path: input },
        { option: '--store', path: ':memory:' },
        { option: '--output', path: ':memory:' },
      ]),
    ).toBeUndefined();
  });
});

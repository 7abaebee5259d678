// The input, the enriched output, the sidecar and the store must be four different files
// (docs/cli-contract.md "Input files", Never overwritten), checked before anything is opened for writing
// or any request is made. Two paths name the same file when they resolve to the same real path
// (symbolic links, `..`, a linked directory) or share a device and inode (hard links).
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../api/errors.js';

export interface NamedFile {
  /** How the user gave it: '<input>', '--output', '--errors', '--store'. */
  option: string;
  /** As given; '-' (a standard stream) and undefined (not used) are not files. */
  path: string | undefined;
}

interface Identity {
  file: NamedFile & { path: string };
  realPath: string;
  /** `dev:ino` of an existing file. */
  inode: string | undefined;
}

/** SQLite's name for a store kept in memory: no file at all. */
const IN_MEMORY = ':memory:';

/**
 * The real path of a file, or for one not made yet, the real path of its parent joined with its
 * name (the parent may itself be a link). A parent that does not exist either is taken as given.
 */
function realPathOf(file: string): string {
  const absolute = path.resolve(file);
  try {
    return fs.realpathSync(absolute);
  } catch {
    try {
      return path.join(fs.realpathSync(path.dirname(absolute)), path.basename(absolute));
    } catch {
      return absolute;
    }
  }
}

function identify(file: NamedFile & { path: string }): Identity {
  let inode: string | undefined;
  try {
    const stat = fs.statSync(file.path);
    inode = `${stat.dev}:${stat.ino}`;
  } catch {
    inode = undefined;
  }
  return { file, realPath: realPathOf(file.path), inode };
}

/** How a message names a file: by its option, the input in words (not the usage's `<input>`). */
function said(file: NamedFile): string {
  return file.option === '<input>' ? 'the input' : file.option;
}

/** Throws a ConfigError naming both options when two of `files` are the same file. */
export function assertDistinctFiles(files: NamedFile[]): void {
  const named = files.filter((file): file is NamedFile & { path: string } => file.path !== undefined && file.path !== '-' && file.path !== IN_MEMORY);
  const seen: Identity[] = [];
  for (const file of named) {
    const identity = identify(file);
    const same = seen.find((other) => other.realPath === identity.realPath || (identity.inode !== undefined && other.inode === identity.inode));
    if (same) {
      throw new ConfigError(`${said(file)} would overwrite ${said(same.file)} (${same.file.path}): choose another path`);
    }
    seen.push(identity);
  }
}

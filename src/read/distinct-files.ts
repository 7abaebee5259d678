// The input, the enriched output, the sidecar and the store must be four different files
// (docs/cli-contract.md "Input files", Never overwritten), checked before anything is opened for writing
// or any request is made. Two paths name the same file when they resolve to the same real path
// (symbolic links, even to a file not made yet; `..`, a linked directory) or share a device and
// inode (hard links). A character device is no one's file: /dev/null takes every output given it.
import fs from 'node:fs';
import { ConfigError } from '../api/errors.js';
import { realPathOf } from '../core/real-path.js';

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

/** A file's identity; none for a character device, which takes any number of writers (/dev/null, a terminal). */
function identify(file: NamedFile & { path: string }): Identity | undefined {
  let inode: string | undefined;
  try {
    const stat = fs.statSync(file.path);
    if (stat.isCharacterDevice()) return undefined;
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
    if (!identity) continue;
    const same = seen.find((other) => other.realPath === identity.realPath || (identity.inode !== undefined && other.inode === identity.inode));
    if (same) {
      throw new ConfigError(`${said(file)} would overwrite ${said(same.file)} (${same.file.path}): choose another path`);
    }
    seen.push(identity);
  }
}

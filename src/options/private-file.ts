// The config file and the token file: read only when each is a regular file of sensible size that
// nobody else may change. A device (`/dev/zero`) would be read for ever, a FIFO would hang the
// command, a 2 GB file would be held whole; a file that group or others can write, or that another
// user owns, lets them point `baseUrl` at their own host and receive the token (ssh refuses such a
// file with StrictModes). Each is refused in one line, before anything is read.
import fs from 'node:fs';
import { ConfigError } from '../api/errors.js';

/** The most a config or token file may hold. */
export const PRIVATE_FILE_MAX_BYTES = 1024 * 1024;

export interface PrivateFile {
  text: string;
  /** Who besides its owner may read it: 'everyone', 'its group', or undefined (no one; Windows). */
  readers: string | undefined;
  /** Where the path given leads, when it is a symbolic link. */
  linkTo: string | undefined;
}

/** Why `fs.openSync`/`readSync` failed, in words. */
function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT'
    ? 'no such file'
    : code === 'EACCES' || code === 'EPERM'
      ? 'permission denied'
      : code === 'EISDIR'
        ? 'a folder, not a file'
        : (code ?? 'unreadable');
}

/** What the path leads to when it is not a regular file, in words. */
function kindOf(stat: fs.Stats): string | undefined {
  if (stat.isFile()) return undefined;
  if (stat.isDirectory()) return 'a folder';
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Reads `file` (named `shown` in messages, e.g. "config file cfg.json" or "tokenFile token.txt"):
 * refused when it is not a regular file, is over PRIVATE_FILE_MAX_BYTES, may be written by its
 * group or others, or belongs to another user than this one or root. `fix` says where the path
 * came from. A FIFO is opened without waiting for a writer (O_NONBLOCK), and only its type is read.
 */
export function readPrivateFile(file: string, shown: string, fix: string): PrivateFile {
  let fd: number;
  try {
    // Looked at before it is opened: a device is not even opened.
    refuseKind(fs.statSync(file), shown, fix);
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0) | (fs.constants.O_NOCTTY ?? 0));
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`Cannot read ${shown}: ${reasonOf(error)}; ${fix}`);
  }
  try {
    // And again once open, where it cannot change under us.
    const stat = fs.fstatSync(fd);
    refuseKind(stat, shown, fix);
    refuseOthers(stat, shown, file);
    const text = readAtMost(fd, shown, fix);
    return { text, readers: readersOf(stat), linkTo: linkTarget(file) };
  } finally {
    fs.closeSync(fd);
  }
}

function refuseKind(stat: fs.Stats, shown: string, fix: string): void {
  const kind = kindOf(stat);
  if (kind) throw new ConfigError(`Refusing the ${shown}: it is ${kind}, not a regular file; ${fix}`);
  if (stat.size > PRIVATE_FILE_MAX_BYTES) throw tooBig(shown, fix);
}

function tooBig(shown: string, fix: string): ConfigError {
  return new ConfigError(`Refusing the ${shown}: it is larger than ${PRIVATE_FILE_MAX_BYTES / 1024 / 1024} MiB, which no config or token file is; ${fix}`);
}

/** At most PRIVATE_FILE_MAX_BYTES + 1 bytes: a file that grew past the limit since its stat is refused too. */
function readAtMost(fd: number, shown: string, fix: string): string {
  const buffer = Buffer.alloc(PRIVATE_FILE_MAX_BYTES + 1);
  let length = 0;
  for (;;) {
    let n: number;
    try {
      n = fs.readSync(fd, buffer, length, buffer.length - length, null);
    } catch (error) {
      throw new ConfigError(`Cannot read ${shown}: ${reasonOf(error)}; ${fix}`);
    }
    if (n === 0) break;
    length += n;
    if (length > PRIVATE_FILE_MAX_BYTES) throw tooBig(shown, fix);
  }
  return buffer.toString('utf8', 0, length);
}

/**
 * ssh's StrictModes: a file its group or others can write, or that another user (not root) owns,
 * may have been changed by them. Windows has no such mode bits: nothing to check there.
 */
function refuseOthers(stat: fs.Stats, shown: string, file: string): void {
  const uid = process.getuid?.();
  if (uid === undefined || process.platform === 'win32') return;
  const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
  if ((stat.mode & 0o022) !== 0) {
    const who = (stat.mode & 0o002) !== 0 ? 'everyone' : 'its group';
    throw new ConfigError(`Refusing the ${shown}: its mode is ${mode}, so ${who} can change it (ssh refuses such a file too); run: chmod go-w ${file}`);
  }
  if (stat.uid !== uid && stat.uid !== 0) {
    throw new ConfigError(`Refusing the ${shown}: it belongs to another user (uid ${stat.uid}, mode ${mode}), who can change it; use a file of your own`);
  }
}

/** Who besides the owner may read it: its group counts too (a shared group such as `users` is often everyone). */
function readersOf(stat: fs.Stats): string | undefined {
  if (process.platform === 'win32') return undefined;
  if ((stat.mode & 0o004) !== 0) return 'everyone';
  return (stat.mode & 0o040) !== 0 ? 'its group' : undefined;
}

function linkTarget(file: string): string | undefined {
  try {
    return fs.lstatSync(file).isSymbolicLink() ? fs.realpathSync(file) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The warning for a file holding the token that others may read ("the tokenFile /home/me/token is
 * readable ..."), naming the path given: `chmod` on a link would change the file it leads to (say
 * /etc/passwd), so a link is said to be one, with no chmod.
 */
export function readableWarning(subject: string, file: string, read: PrivateFile): string | undefined {
  if (!read.readers) return undefined;
  if (read.linkTo)
    return `${subject} is a link to ${read.linkTo}, which is readable by other users (${read.readers}); keep the token in a file only you can read`;
  return `${subject} is readable by other users (${read.readers}); run: chmod 600 ${file}`;
}

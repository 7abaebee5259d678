// Where a file name leads: the path an output is written at, and the one two names are compared by
// (read/distinct-files.ts). Links are followed even when what they lead to is not made yet: a link
// `out.csv → store.sqlite-wal` names the store's log before SQLite makes it, and an output written
// through a link is written at its target, the link left a link (docs/cli-contract.md, "Never overwritten").
import fs from 'node:fs';
import path from 'node:path';

/** More links than this in a row are a circle (Linux's own limit on a path's links is 40). */
const MAX_LINKS = 40;

/**
 * The real path of `file`: every link followed, `..` and linked folders resolved. For a name not
 * made yet, the real path of its folder joined with its name; a folder not made either is taken as
 * given. A link that leads in a circle is left where the circle begins (opening it fails: ELOOP).
 */
export function realPathOf(file: string): string {
  let current = path.resolve(file);
  for (let links = 0; links < MAX_LINKS; links += 1) {
    try {
      return fs.realpathSync(current);
    } catch {
      // Not there (or not all of it): its folder's real path, and its name, which may be a dangling link.
    }
    let folder: string;
    try {
      folder = fs.realpathSync(path.dirname(current));
    } catch {
      return current;
    }
    const named = path.join(folder, path.basename(current));
    let target: string;
    try {
      target = fs.readlinkSync(named);
    } catch {
      return named;
    }
    current = path.resolve(folder, target);
  }
  return current;
}

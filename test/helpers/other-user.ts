// Running the built CLI as another user (nobody, through util-linux's setpriv), for a test run as
// root that needs a reader without root's power to write anything. That user cannot enter a
// checkout in a private folder (a `mktemp -d` clone, mode 700) nor the run's own temporary folder
// (also 700), so it runs a copy: dist/, package.json and the production packages of node_modules
// (those the lockfile does not mark `dev`), in a folder of a world-enterable temporary place,
// removed when the test file ends.
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './cli.js';
import { runSync } from './processes.js';
import { makeTempDir } from './temp-dirs.js';

export const NOBODY = 65534;

/** Whether every folder from `dir` up to / may be entered by any user (the others' x bit). */
function enterableByAll(dir: string): boolean {
  for (let up = dir; ; up = path.dirname(up)) {
    try {
      if ((fs.statSync(up).mode & 0o001) === 0) return false;
    } catch {
      return false;
    }
    if (up === path.dirname(up)) return true;
  }
}

/** The first of the system's temporary places any user may enter, if there is one. */
export const SHARED_TMP = ['/tmp', '/var/tmp', '/dev/shm'].find(enterableByAll);

/** Why a test cannot run the CLI as nobody here, or undefined when it can (root, setpriv, a shared temporary place). */
export const cannotRunAsNobody: string | undefined =
  process.platform === 'win32'
    ? 'Windows'
    : process.getuid?.() !== 0
      ? 'not root: no other user to run as'
      : SHARED_TMP === undefined
        ? 'no temporary folder (/tmp, /var/tmp, /dev/shm) that every user may enter'
        : runSync('setpriv', ['--version']).status !== 0
          ? 'util-linux setpriv is missing'
          : undefined;

/**
 * A folder in SHARED_TMP that every user may enter and read (mode 755), holding `app/`, a copy of
 * the built CLI (its entry: `app/dist/cli/main.js`); removed when the test file ends.
 */
export function sharedFolderWithCli(): { folder: string; cli: string } {
  const folder = makeTempDir('lead-enrich-shared-', SHARED_TMP);
  fs.chmodSync(folder, 0o755);
  const app = path.join(folder, 'app');
  const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; link?: boolean }>;
  };
  const production = Object.entries(lock.packages).filter(([where, entry]) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(where) && entry.dev !== true);
  for (const part of ['dist', 'package.json', ...production.map(([where]) => where)]) {
    fs.cpSync(path.join(REPO_ROOT, part), path.join(app, part), { recursive: true, dereference: true });
  }
  // mkdtemp and a private umask would leave the copy unreadable to others.
  runSync('chmod', ['-R', 'a+rX', folder]);
  return { folder, cli: path.join(app, 'dist', 'cli', 'main.js') };
}

/** Runs `node <cli> ...args` as nobody (setpriv), in a clean environment whose HOME is `home`. */
export function runAsNobody(cli: string, args: string[], home: string): { status: number | null; stdout: string; stderr: string } {
  const r = runSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, cli, ...args], {
    env: { PATH: process.env.PATH, HOME: home },
    timeoutMs: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Where the result store lives when --store is not given.

import os from 'node:os';
import path from 'node:path';
import envPaths from 'env-paths';

const APP = 'lead-enrich';
const FILE = 'results.sqlite';
/** The embedded sandbox's answers: made-up data that must never mix with paid-for answers. */
const SANDBOX_FILE = 'results.sandbox.sqlite';

/**
 * `LEAD_ENRICH_STORE` when set (and not empty), else the per-user cache directory:
 * `$XDG_CACHE_HOME/lead-enrich/results.sqlite` (default `~/.cache/...`) on Linux,
 * `~/Library/Caches/lead-enrich/...` on macOS, `%LOCALAPPDATA%\lead-enrich\Cache\...` on Windows.
 *
 * A cache directory (not a data directory) because every entry can be bought again: losing the
 * file costs credits, never correctness.
 */
export function defaultStorePath(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['LEAD_ENRICH_STORE'];
  if (explicit !== undefined && explicit !== '') return explicit;

  if (process.platform !== 'darwin' && process.platform !== 'win32') {
    // Same rule as env-paths' Linux branch, but read from `env` (env-paths reads process.env
    // itself, which would make the `env` parameter a lie). The XDG spec says a relative value
    // is invalid and must be ignored, which env-paths does not do.
    const xdg = env['XDG_CACHE_HOME'];
    const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.cache');
    return path.join(base, APP, FILE);
  }
  return path.join(envPaths(APP, { suffix: '' }).cache, FILE);
}

/**
 * The store of runs against the embedded sandbox (`--sandbox`): `LEAD_ENRICH_STORE` when set
 * (an explicit choice wins), else `results.sandbox.sqlite` beside the default store, so that
 * trying the tool never fills (nor `store clear` of the sandbox ever empties) the store of the
 * real service (cli-contract.md, "Store housekeeping").
 */
export function sandboxStorePath(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['LEAD_ENRICH_STORE'];
  if (explicit !== undefined && explicit !== '') return explicit;
  return path.join(path.dirname(defaultStorePath(env)), SANDBOX_FILE);
}

// Where the result store lives when --store is not given.

import os from 'node:os';
import path from 'node:path';
import { processEnv } from '../api/environment.js';

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
export function defaultStorePath(env: NodeJS.ProcessEnv = processEnv(), platform: NodeJS.Platform = process.platform): string {
  const explicit = env['LEAD_ENRICH_STORE'];
  if (explicit !== undefined && explicit !== '') return explicit;
  return path.join(cacheDirectory(env, platform), FILE);
}

/** Each platform's per-user cache folder for the app, read from `env` (three lines: no dependency for them). */
function cacheDirectory(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  const home = os.homedir();
  if (platform === 'darwin') return path.join(home, 'Library', 'Caches', APP);
  if (platform === 'win32') return path.join(env['LOCALAPPDATA'] || path.join(home, 'AppData', 'Local'), APP, 'Cache');
  // The XDG spec says a relative value is invalid and must be ignored.
  const xdg = env['XDG_CACHE_HOME'];
  return path.join(xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(home, '.cache'), APP);
}

/**
 * The store of runs against the embedded sandbox (`--sandbox`): `LEAD_ENRICH_STORE` when set
 * (an explicit choice wins), else `results.sandbox.sqlite` beside the default store, so that
 * trying the tool never fills (nor `store clear` of the sandbox ever empties) the store of the
 * real service (docs/cli-contract.md, "Store housekeeping").
 */
export function sandboxStorePath(env: NodeJS.ProcessEnv = processEnv()): string {
  const explicit = env['LEAD_ENRICH_STORE'];
  if (explicit !== undefined && explicit !== '') return explicit;
  return path.join(path.dirname(defaultStorePath(env)), SANDBOX_FILE);
}

// A package registry on 127.0.0.1 holding this checkout's dependencies, so that a test installs as
// a user's machine would without a route to any registry: the suite needs no network
// (docs/development.md). `npm install -g ./lead-enrich-*.tgz` needs the production dependencies,
// their ranges resolved by npm; a fresh clone's `npm install` needs the development ones too, as
// package-lock.json pins them. Each is served with a package document (the "packument" a registry
// answers for a name) listing the versions node_modules holds (those package-lock.json holds): npm's
// cache cannot serve instead, as `npm ci` keeps the tarballs there but not the package documents.
// The tarballs themselves come from that cache where it holds them (the public registry's bytes,
// which `npm ci` checked against the lockfile), else from `npm pack` of the copy in node_modules:
// packing all 488 of a fresh clone's took 69 s of CPU, most of the suite's costliest test file.
//
// Tarballs are at a registry's usual address, /NAME/-/BASENAME-VERSION.tgz: npm asks for them there
// when a lockfile's `resolved` names the public registry (it puts the configured registry's host in
// its place), and through the package document when the lockfile has no `resolved` (this one's:
// it is written with omit-lockfile-registry-resolved). A packed one's bytes are not the public
// registry's, so the lockfile's `integrity` does not match them: pinLockfile writes theirs in its
// place (and leaves the ones from npm's cache as they are).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { run } from './processes.js';

export interface LocalRegistry {
  /** The registry's address, for npm_config_registry. */
  url: string;
  /** What npm asked for that the registry does not hold (a failed install names them). */
  missing: string[];
  /** Everything npm asked for, held or not. */
  asked: string[];
  /** The integrity (sha512) of the tarball served for name@version, or undefined when not held. */
  integrity(name: string, version: string): string | undefined;
  close(): Promise<void>;
}

/** Which of the lockfile's packages: those a production install needs, or all of them (`npm install` in a clone). */
export type Scope = 'production' | 'all';

interface LockEntry {
  name?: string;
  version?: string;
  integrity?: string;
  dev?: boolean;
  optional?: boolean;
  link?: boolean;
}

interface Lockfile {
  packages: Record<string, LockEntry>;
}

/** A lockfile entry's package name: its own `name` (an alias), or its folder's after the last node_modules/. */
function nameOf(folder: string, entry: LockEntry): string {
  return entry.name ?? folder.slice(folder.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

interface Locked {
  /** Relative to the checkout's root. */
  folder: string;
  optional: boolean;
  installed: boolean;
  integrity: string | undefined;
}

/** The lockfile's packages in `scope`. */
function locked(root: string, scope: Scope): Locked[] {
  const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as Lockfile;
  return Object.entries(lock.packages)
    .filter(([folder, entry]) => folder !== '' && entry.link !== true && (scope === 'all' || entry.dev !== true))
    .map(([folder, entry]) => ({
      folder,
      optional: entry.optional === true,
      installed: fs.existsSync(path.join(root, folder, 'package.json')),
      integrity: entry.integrity,
    }));
}

/** npm's cache: the one npm runs this with (it sets npm_config_cache for its scripts), else its default. */
export function npmCache(): string {
  return process.env.npm_config_cache ?? path.join(os.homedir(), '.npm');
}

/**
 * The file in npm's cache holding the bytes whose sha512 is the lockfile's `integrity`, when the
 * cache holds them: cacache keeps content at content-v2/sha512/, its digest in hex split 2/2/rest.
 */
export function cachedTarball(cache: string, integrity: string | undefined): string | undefined {
  const sha512 = integrity?.split(/\s+/).find((hash) => hash.startsWith('sha512-'));
  if (sha512 === undefined) return undefined;
  const hex = Buffer.from(sha512.slice('sha512-'.length), 'base64').toString('hex');
  const file = path.join(cache, '_cacache', 'content-v2', 'sha512', hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
  return fs.existsSync(file) ? file : undefined;
}

/**
 * Why the registry cannot be made here (a dependency in `scope` the lockfile lists but
 * node_modules lacks, as after `npm ci --omit=prod`), or undefined. An optional one another
 * platform needs is not installed, and need not be: npm goes on without it.
 */
export function registryMissing(root: string, scope: Scope = 'production'): string | undefined {
  const absent = locked(root, scope)
    .filter((p) => !p.installed && !p.optional)
    .map((p) => p.folder);
  return absent.length === 0
    ? undefined
    : `the dependencies ${absent.join(', ')} are not installed in node_modules (run npm ci), so they cannot be installed offline`;
}

interface Version {
  manifest: Record<string, unknown>;
  file: string;
  integrity: string;
  shasum: string;
}

/** The file name npm pack gives a package, and a registry's address for it: the name's last part, then the version. */
function tarballName(name: string, version: string): string {
  return `${name.split('/').pop()}-${version}.tgz`;
}

/**
 * The installed dependencies in `scope`, keyed by name, then version: each one's tarball from npm's
 * cache, or where the cache lacks it packed into `dir` (one `npm pack` for all of those).
 */
async function dependencyTarballs(root: string, dir: string, scope: Scope): Promise<Map<string, Map<string, Version>>> {
  const installed = locked(root, scope).filter((p) => p.installed);
  const files = new Map<string, string>();
  for (const { folder, integrity } of installed) {
    const cached = cachedTarball(npmCache(), integrity);
    if (cached !== undefined) files.set(folder, cached);
  }
  const toPack = installed.map((p) => p.folder).filter((folder) => !files.has(folder));
  for (const [folder, file] of await packInto(root, dir, toPack)) files.set(folder, file);
  const names = new Map<string, Map<string, Version>>();
  for (const { folder } of installed) {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, folder, 'package.json'), 'utf8')) as { name: string; version: string };
    const file = files.get(folder)!;
    const bytes = fs.readFileSync(file);
    const integrity = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
    const shasum = createHash('sha1').update(bytes).digest('hex');
    if (!names.has(manifest.name)) names.set(manifest.name, new Map());
    names.get(manifest.name)!.set(manifest.version, { manifest, file, integrity, shasum });
  }
  return names;
}

/** Packs the installed packages in `folders` into `dir` (one `npm pack`): each folder's tarball. */
async function packInto(root: string, dir: string, folders: string[]): Promise<Map<string, string>> {
  if (folders.length === 0) return new Map();
  const packed = await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir, ...folders.map((f) => `./${f}`)], {
    cwd: root,
    // A cache of its own: npm pack keeps each tarball it makes in its cache, not the user's to fill.
    env: { ...process.env, npm_config_cache: path.join(dir, '.npm-cache'), npm_config_update_notifier: 'false' },
    // Bounded by the test or hook that packs (install-from-clone's: ten minutes), not here: packing
    // every dependency outlasted 120 s at a load average of 20, with nothing wrong.
    timeoutMs: Infinity,
  });
  if (packed.code !== 0) throw new Error(`npm pack of the dependencies exited ${packed.code}${packed.timedOut ? ' (timed out)' : ''}: ${packed.stderr}`);
  return new Map(
    folders.map((folder) => {
      const manifest = JSON.parse(fs.readFileSync(path.join(root, folder, 'package.json'), 'utf8')) as { name: string; version: string };
      // npm pack's file name: the name without its @, its / as -, then the version.
      return [folder, path.join(dir, `${manifest.name.replace(/^@/, '').replace('/', '-')}-${manifest.version}.tgz`)];
    }),
  );
}

/** The package document for one name: every version held, each with its tarball's address and integrity. */
function packument(name: string, versions: Map<string, Version>, base: string): string {
  const entries = [...versions].map(([version, { manifest, integrity, shasum }]) => {
    const dist = { tarball: `${base}/${name}/-/${tarballName(name, version)}`, integrity, shasum };
    return [version, { ...manifest, _id: `${name}@${version}`, dist }] as const;
  });
  return JSON.stringify({ name, 'dist-tags': { latest: entries.at(-1)![0] }, versions: Object.fromEntries(entries) });
}

/** The tarball a registry address names (/NAME/-/BASENAME-VERSION.tgz), if held. */
function tarballAt(url: string, names: Map<string, Map<string, Version>>): Version | undefined {
  const [, name, file] = /^\/((?:@[^/]+\/)?[^/]+)\/-\/([^/]+\.tgz)$/.exec(url) ?? [];
  const versions = name === undefined ? undefined : names.get(name);
  return [...(versions ?? [])].find(([version]) => tarballName(name!, version) === file)?.[1];
}

/**
 * Starts the registry holding the installed dependencies in `scope`; the tarballs npm's cache
 * lacks are packed into `dir` (the caller's temporary folder).
 */
export async function startLocalRegistry(root: string, dir: string, scope: Scope = 'production'): Promise<LocalRegistry> {
  const names = await dependencyTarballs(root, dir, scope);
  const missing: string[] = [];
  const asked: string[] = [];
  const server = http.createServer((request, response) => {
    const url = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    asked.push(url);
    const tarball = tarballAt(url, names);
    const versions = names.get(url.slice(1));
    if (tarball !== undefined) {
      response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(fs.readFileSync(tarball.file));
    } else if (versions !== undefined) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(packument(url.slice(1), versions, base));
    } else {
      missing.push(url);
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/`,
    missing,
    asked,
    integrity: (name, version) => names.get(name)?.get(version)?.integrity,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * The npm settings (as environment variables) of an install from `registry` alone: through the
 * npm cache `cache` (a fresh folder of the test's), any request for another host sent to a proxy
 * that is not there (so it fails at once, and the install with it), no retries, no audit.
 */
export function offlineNpm(registry: LocalRegistry, cache: string): Record<string, string> {
  return {
    npm_config_registry: registry.url,
    npm_config_cache: cache,
    npm_config_proxy: 'http://127.0.0.1:9/',
    npm_config_https_proxy: 'http://127.0.0.1:9/',
    npm_config_noproxy: '127.0.0.1',
    npm_config_fetch_retries: '0',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
}

/**
 * Writes into the lockfile at `file` the integrity of each tarball `registry` serves in place of
 * the public registry's (versions, and all else, as they were; written as npm writes it, so that
 * an install leaves it as it is). Returns how many entries it changed.
 */
export function pinLockfile(file: string, registry: LocalRegistry): number {
  const lock = JSON.parse(fs.readFileSync(file, 'utf8')) as Lockfile;
  let pinned = 0;
  for (const [folder, entry] of Object.entries(lock.packages)) {
    const integrity = folder === '' || entry.version === undefined ? undefined : registry.integrity(nameOf(folder, entry), entry.version);
    if (integrity === undefined || entry.integrity === undefined) continue;
    entry.integrity = integrity;
    pinned += 1;
  }
  fs.writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  return pinned;
}

// A package registry on 127.0.0.1 holding this checkout's production dependencies, so that a test
// installs the packed tarball (`npm install -g ./lead-enrich-*.tgz`) as a user's machine would,
// its dependency ranges resolved by npm, without a route to any registry: the suite needs no
// network (docs/development.md). Each dependency is served as `npm pack` packs the copy `npm ci`
// put in node_modules (the versions package-lock.json holds), with a package document (the
// "packument" a registry answers for a name) listing those versions. npm's cache does not do
// instead: `npm ci` keeps the tarballs there but not the package documents.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { run } from './processes.js';

export interface LocalRegistry {
  /** The registry's address, for npm_config_registry. */
  url: string;
  /** What npm asked for that the registry does not hold (a failed install names them). */
  missing: string[];
  close(): Promise<void>;
}

interface Lockfile {
  packages: Record<string, { dev?: boolean; optional?: boolean }>;
}

/** The production dependencies package-lock.json lists: their folders (relative to `root`), and whether optional. */
function production(root: string): Array<{ folder: string; optional: boolean; installed: boolean }> {
  const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as Lockfile;
  return Object.entries(lock.packages)
    .filter(([folder, entry]) => folder !== '' && entry.dev !== true)
    .map(([folder, entry]) => ({ folder, optional: entry.optional === true, installed: fs.existsSync(path.join(root, folder, 'package.json')) }));
}

/**
 * Why the registry cannot be made here (a production dependency the lockfile lists but
 * node_modules lacks, as after `npm ci --omit=prod`), or undefined. An optional one another
 * platform needs is not installed, and need not be: npm goes on without it.
 */
export function registryMissing(root: string): string | undefined {
  const absent = production(root).filter((p) => !p.installed && !p.optional).map((p) => p.folder);
  return absent.length === 0 ? undefined : `the dependencies ${absent.join(', ')} are not installed in node_modules (run npm ci), so the packed tarball cannot be installed offline`;
}

interface Version {
  manifest: Record<string, unknown>;
  file: string;
}

/** Packs every production dependency into `dir` (one `npm pack`), keyed by name, then version. */
async function packDependencies(root: string, dir: string): Promise<Map<string, Map<string, Version>>> {
  const folders = production(root).filter((p) => p.installed).map((p) => p.folder);
  const packed = await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir, ...folders.map((f) => `./${f}`)], {
    cwd: root,
    env: { ...process.env, npm_config_update_notifier: 'false' },
    timeoutMs: 120_000,
  });
  if (packed.code !== 0) throw new Error(`npm pack of the dependencies exited ${packed.code}: ${packed.stderr}`);
  const names = new Map<string, Map<string, Version>>();
  for (const folder of folders) {
    const manifest = JSON.parse(fs.readFileSync(path.join(root, folder, 'package.json'), 'utf8')) as { name: string; version: string };
    // npm pack's file name: the name without its @, its / as -, then the version.
    const file = path.join(dir, `${manifest.name.replace(/^@/, '').replace('/', '-')}-${manifest.version}.tgz`);
    if (!names.has(manifest.name)) names.set(manifest.name, new Map());
    names.get(manifest.name)!.set(manifest.version, { manifest, file });
  }
  return names;
}

/** The package document for one name: every version held, each with its tarball's address and integrity. */
function packument(name: string, versions: Map<string, Version>, base: string): string {
  const entries = [...versions].map(([version, { manifest, file }]) => {
    const bytes = fs.readFileSync(file);
    const dist = {
      tarball: `${base}/-/tarballs/${path.basename(file)}`,
      integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
      shasum: createHash('sha1').update(bytes).digest('hex'),
    };
    return [version, { ...manifest, _id: `${name}@${version}`, dist }] as const;
  });
  return JSON.stringify({ name, 'dist-tags': { latest: entries.at(-1)![0] }, versions: Object.fromEntries(entries) });
}

/** Starts the registry; its tarballs are packed into `dir` (the caller's temporary folder). */
export async function startLocalRegistry(root: string, dir: string): Promise<LocalRegistry> {
  const names = await packDependencies(root, dir);
  const missing: string[] = [];
  const server = http.createServer((request, response) => {
    const url = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    const tarball = /^\/-\/tarballs\/([^/]+\.tgz)$/.exec(url)?.[1];
    const versions = names.get(url.slice(1));
    if (tarball !== undefined && fs.existsSync(path.join(dir, tarball))) {
      response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(fs.readFileSync(path.join(dir, tarball)));
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
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

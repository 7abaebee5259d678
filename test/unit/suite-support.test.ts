// The suite's own rules (test/support/, test/helpers/processes.ts): every process a test starts
// goes through one helper, which ends it with its test; a run's temporary folder is told from a
// dead run's by its owner's pid and start time, so that the next run removes only a dead run's.
// The offline registry (test/helpers/local-registry.ts) serves npm's cached tarballs by integrity.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cachedTarball, npmCache } from '../helpers/local-registry.js';
import { startOf } from '../helpers/process-table.js';
import { COSTS } from '../support/file-costs.js';
import { isDeadRun } from '../support/run-folders.js';

const TEST_ROOT = path.resolve(import.meta.dirname, '..');

function typescriptFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? typescriptFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('processes started by tests', () => {
  it('are started through test/helpers/processes.ts only (no other file imports node:child_process but for types)', () => {
    const importing = typescriptFiles(TEST_ROOT)
      .filter((file) => /^import (?!type )[^;]*from 'node:child_process'/m.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(TEST_ROOT, file));
    expect(importing).toEqual([path.join('helpers', 'processes.ts')]);
  });
});

describe('run folders', () => {
  const own = `lead-enrich-suite-${process.pid}.${startOf(process.pid) ?? '0'}-AbCdEf`;

  it("this process's is alive; one named for a pid no process has, dead", () => {
    expect(isDeadRun(own)).toBe(false);
    expect(isDeadRun(`lead-enrich-suite-${2 ** 22 + 1}.12345-AbCdEf`)).toBe(true);
  });

  // Skipped off Linux: a process's start time is read from /proc/PID/stat, which only Linux has.
  it.skipIf(process.platform !== 'linux')(
    'one named for a live pid that started at another time (the pid given out again) is dead',
    { meta: { skipReason: 'start times are read from /proc (Linux)' } },
    () => {
      expect(isDeadRun(`lead-enrich-suite-${process.pid}.${Number(startOf(process.pid)) + 1}-AbCdEf`)).toBe(true);
    },
  );

  it('a folder not named as a run folder (an older one, without its owner) is never taken for a dead run', () => {
    expect(isDeadRun('lead-enrich-suite-AbCdEf')).toBe(false);
    expect(isDeadRun(path.join('/tmp', 'lead-enrich-test-123.456-AbCdEf'))).toBe(false);
  });
});

describe('the order the files start in', () => {
  it('names only test files that exist (a file renamed or removed would lose its place at the front)', () => {
    const missing = Object.keys(COSTS).filter((file) => !fs.existsSync(path.join(TEST_ROOT, '..', file)));
    expect(missing).toEqual([]);
  });
});

describe("the offline registry's tarballs from npm's cache", () => {
  const sha512 = (bytes: Buffer) => `sha512-${createHash('sha512').update(bytes).digest('base64')}`;

  it('finds the bytes whose sha512 the lockfile names where cacache keeps them, and nothing else', () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'lead-enrich-cacache-'));
    try {
      const bytes = Buffer.from('a tarball');
      const hex = createHash('sha512').update(bytes).digest('hex');
      const file = path.join(cache, '_cacache', 'content-v2', 'sha512', hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, bytes);
      // A lockfile's integrity may list several hashes; the sha512 one is the address.
      expect(cachedTarball(cache, `sha1-${createHash('sha1').update(bytes).digest('base64')} ${sha512(bytes)}`)).toBe(file);
      expect(cachedTarball(cache, sha512(Buffer.from('another tarball')))).toBeUndefined();
      expect(cachedTarball(cache, `sha1-${createHash('sha1').update(bytes).digest('base64')}`)).toBeUndefined();
      expect(cachedTarball(cache, undefined)).toBeUndefined();
    } finally {
      fs.rmSync(cache, { recursive: true, force: true });
    }
  });

  it("reads npm's own cache as npm writes it: a locked package found there hashes to the lockfile's integrity", (context) => {
    const cache = npmCache();
    const lock = JSON.parse(fs.readFileSync(path.join(TEST_ROOT, '..', 'package-lock.json'), 'utf8')) as { packages: Record<string, { integrity?: string }> };
    const found = Object.values(lock.packages)
      .map((entry) => ({ integrity: entry.integrity, file: cachedTarball(cache, entry.integrity) }))
      .filter((p) => p.file !== undefined);
    if (found.length === 0) context.skip(`npm's cache (${cache}) holds none of the lockfile's tarballs: the registry packs them instead`);
    for (const { integrity, file } of found.slice(0, 20))
      expect(sha512(fs.readFileSync(file!))).toBe(integrity!.split(/\s+/).find((h) => h.startsWith('sha512-')));
  });
});

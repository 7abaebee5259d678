// Every temporary folder a test makes goes through here, and each test file removes its own when
// it ends (test/support/remove-temp-dirs.ts, a setup file): a test that forgets its folder, or fails
// before its own cleanup, still leaves nothing behind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made: string[] = [];

/** A fresh folder in `parent` (default os.tmpdir()), removed when the test file ends. */
export function makeTempDir(prefix = 'lead-enrich-test-', parent = os.tmpdir()): string {
  const dir = fs.mkdtempSync(path.join(parent, prefix));
  made.push(dir);
  return dir;
}

/**
 * Removes every folder made so far (a file's afterAll; also usable inside a test). Asynchronous:
 * a fresh clone's node_modules (install-from-clone.test.ts) took over a minute to remove on a
 * loaded 2-core CI machine.
 */
export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => fs.promises.rm(dir, { recursive: true, force: true, maxRetries: 3 })));
}

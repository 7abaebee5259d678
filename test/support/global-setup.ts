// Runs once around the whole run (every project):
// - refuses a run that would silently leave a test file out: each *.test.ts must sit in one of the
//   three layer folders the projects collect;
// - gives the run a temporary folder of its own (TMPDIR, which the CLI helpers pass on to the
//   processes they start), so that what this run leaves behind is told apart from what other runs
//   on the same machine make at the same time, and fails the run if a `lead-enrich-*` folder made
//   by a test is still there at the end. The folder itself is removed either way.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TEST_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const LAYERS = ['unit', 'integration', 'e2e'];

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

function refuseFilesOutsideLayers(): void {
  const outside = testFiles(TEST_ROOT)
    .map((file) => path.relative(TEST_ROOT, file).split(path.sep))
    .filter((parts) => !LAYERS.includes(parts[0]!))
    .map((parts) => path.posix.join('test', ...parts));
  if (outside.length > 0) {
    throw new Error(
      `test files outside test/unit, test/integration and test/e2e would not run: ${outside.join(', ')}; ` +
        'move each into its layer (unit: in-process, no socket; integration: a server on 127.0.0.1; e2e: the CLI as a process)',
    );
  }
}

export default function setup(): () => void {
  refuseFilesOutsideLayers();
  const outerTmp = os.tmpdir();
  const runTmp = fs.mkdtempSync(path.join(outerTmp, 'lead-enrich-suite-'));
  process.env.TMPDIR = runTmp;
  return () => {
    process.env.TMPDIR = outerTmp;
    const left = fs.readdirSync(runTmp).filter((name) => name.startsWith('lead-enrich-'));
    fs.rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
    if (left.length > 0) {
      throw new Error(`tests left ${left.length} temporary folder(s) behind: ${left.join(', ')}; each test must remove what it makes (test/helpers/temp-dirs.ts)`);
    }
  };
}

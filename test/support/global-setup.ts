// Runs once around the whole run (every project):
// - refuses a run that would silently leave a test file out: each *.test.ts must sit in one of the
//   three layer folders the projects collect;
// - gives the run a temporary folder of its own (TMPDIR, which the CLI helpers pass on to the
//   processes they start), so that what this run leaves behind is told apart from what other runs
//   on the same machine make at the same time, and fails the run if a `lead-enrich-*` folder made
//   by a test is still there at the end. The folder itself is removed either way;
// - fails the run if a process a test started is still running at the end (each is killed with
//   its test: test/helpers/processes.ts), naming it; it is killed then;
// - before the run, kills what a run killed before its own teardown left running, and removes its
//   folder, and says so.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deadRunFolders, isDeadRun, makeRunFolder, removeDeadRunFolders, removeRunFolder } from './run-folders.js';
import { describeProcess, killAll, processesOf, suiteProcesses } from './suite-processes.js';

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

/** Kills the processes of runs that were killed, removes their folders, and says what it did. */
async function cleanUpDeadRuns(outerTmp: string): Promise<void> {
  const say = (text: string) => process.stderr.write(`test/support/global-setup.ts: ${text}\n`);
  const dead = [
    ...new Set([
      ...deadRunFolders(outerTmp),
      ...suiteProcesses()
        .map((p) => p.run)
        .filter(isDeadRun),
    ]),
  ];
  const killed = await killAll(processesOf(dead));
  if (killed.length > 0)
    say(`${killed.length} process(es) left running by a run that was killed before its teardown, killed now: ${killed.map(describeProcess).join(', ')}`);
  const { removed, failed } = removeDeadRunFolders(outerTmp);
  if (removed.length > 0) say(`the temporary folder(s) of ${removed.length} run(s) killed before their teardown, removed: ${removed.join(', ')}`);
  if (failed.length > 0) say(`the temporary folder(s) of ${failed.length} run(s) killed before their teardown could not be removed: ${failed.join('; ')}`);
}

export default async function setup(): Promise<() => Promise<void>> {
  refuseFilesOutsideLayers();
  const outerTmp = os.tmpdir();
  await cleanUpDeadRuns(outerTmp);
  const runTmp = makeRunFolder(outerTmp);
  process.env.TMPDIR = runTmp;
  // Node's cache of compiled code (Node 22.1 and later; ignored before), for the run's own
  // processes: the suite starts the CLI some thousands of times, each compiling the same modules.
  process.env.NODE_COMPILE_CACHE ??= path.join(runTmp, 'node-compile-cache');
  return async () => {
    process.env.TMPDIR = outerTmp;
    const running = await killAll(processesOf([runTmp]));
    const left = fs.readdirSync(runTmp).filter((name) => name.startsWith('lead-enrich-'));
    await removeRunFolder(runTmp);
    const problems: string[] = [];
    if (running.length > 0) {
      problems.push(
        `tests left ${running.length} process(es) running, killed now: ${running.map(describeProcess).join(', ')}; each test must start its processes through test/helpers/processes.ts, which ends them with the test`,
      );
    }
    if (left.length > 0) {
      problems.push(
        `tests left ${left.length} temporary folder(s) behind: ${left.join(', ')}; each test must remove what it makes (test/helpers/temp-dirs.ts)`,
      );
    }
    if (problems.length > 0) throw new Error(problems.join('; '));
  };
}

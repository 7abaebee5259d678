// The suite's own processes (test/helpers/processes.ts): what a test starts ends with it, the
// processes it started in turn too, whether the test passed or failed, and what its code starts
// after it ended (a test that timed out runs on) is killed at once; each carries the suite's mark
// and is listed by the run, by which the run's teardown finds any that got away
// (test/support/global-setup.ts); and the run's folder is removed at its end though a process
// exiting still writes into it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { waitForOutput } from '../helpers/cli.js';
import { startOf } from '../helpers/process-table.js';
import { start, withOwnProcesses, type Started } from '../helpers/processes.js';
import { removeRunFolder } from '../support/run-folders.js';
import { processesOf, suiteProcesses } from '../support/suite-processes.js';
import { until } from './reliability/support.js';

/** Whether `pid` is gone (or only a zombie: a killed process its parent has not reaped yet). */
const gone = (pid: number) => startOf(pid) === undefined;

/**
 * Waits (2 s at most) for `pid`, sent SIGKILL, to be gone. A killed process closes its files
 * before /proc shows it as a zombie: the pipe a test waits on may close a moment before (once, in
 * .ci/run, the orphaned sleep was still listed when the shell's output had closed).
 */
const ended = (pid: number) => until(() => gone(pid), `process ${pid} to end`, 2_000);

/** A shell that starts `sleep 30` in the background, says its pid, and waits. */
async function shellWithChild(): Promise<{ shell: Started; sleeper: number }> {
  const shell = start('sh', ['-c', 'sleep 30 & echo $!; wait'], { stdin: 'ignore', timeoutMs: Infinity });
  await waitForOutput(shell, '\n');
  return { shell, sleeper: Number(shell.output.stdout.trim()) };
}

// Skipped off Linux: the helper finds a test's processes (descendants, marks) in /proc.
describe.skipIf(process.platform !== 'linux')('what a test starts', { meta: { skipReason: 'process groups and /proc as on Linux only' } }, () => {
  it('ends when the test ends, with what it started', async () => {
    let started: { shell: Started; sleeper: number } | undefined;
    await withOwnProcesses(async () => {
      started = await shellWithChild();
    });
    expect((await started!.shell.result).signal).toBe('SIGKILL');
    await ended(started!.sleeper);
  });

  it("ends when its parent has exited before the test did (found by the test's mark)", async () => {
    let sleeper = 0;
    let shell: Started | undefined;
    await withOwnProcesses(async () => {
      // The shell ends at once; the sleep it started in the background lives on, holding the output.
      shell = start('sh', ['-c', 'sleep 30 & echo $!'], { stdin: 'ignore', timeoutMs: Infinity });
      await until(() => shell!.exitCode !== null, 'the shell to end');
      sleeper = Number(shell.output.stdout.trim());
      expect(gone(sleeper)).toBe(false);
    });
    expect((await shell!.result).code).toBe(0);
    await ended(sleeper);
  });

  it('ends when the test fails', async () => {
    let started: { shell: Started; sleeper: number } | undefined;
    const failing = withOwnProcesses(async () => {
      started = await shellWithChild();
      throw new Error('the test failed');
    });
    await expect(failing).rejects.toThrow('the test failed');
    expect((await started!.shell.result).signal).toBe('SIGKILL');
    await ended(started!.sleeper);
  });

  it("is killed at once when started after its test ended (a timed-out test's code running on)", async () => {
    let late: Promise<Started> | undefined;
    await withOwnProcesses(async () => {
      late = new Promise((resolve) => setTimeout(() => resolve(start('sleep', ['30'], { stdin: 'ignore' })), 50));
    });
    expect((await (await late!).result).signal).toBe('SIGKILL');
  });

  it("is found by the run's list of what it started when its environment no longer shows the mark (redis-server writes its title over it)", async () => {
    const child = start('sh', ['-c', 'exec env -i sleep 30'], { stdin: 'ignore' });
    await until(() => suiteProcesses().every((p) => p.pid !== child.pid), 'the exec without the mark');
    expect(processesOf([os.tmpdir()]).filter((p) => p.pid === child.pid)).toEqual([{ pid: child.pid, run: os.tmpdir(), command: 'sleep 30' }]);
    child.kill('SIGKILL');
    await child.result;
  });

  it('carries the mark of this run, by which the teardown finds it', async () => {
    const child = start('sleep', ['30'], { stdin: 'ignore' });
    expect(suiteProcesses().filter((p) => p.pid === child.pid)).toEqual([{ pid: child.pid, run: os.tmpdir(), command: 'sleep 30' }]);
    child.kill('SIGKILL');
    await child.result;
  });
});

describe("the run's folder", () => {
  // What a vitest worker does as it exits (Node writes its compile cache then, into the run's
  // folder): files keep coming while the teardown removes the folder. On Node 22, whose rmSync
  // lists a folder once, a removal without removeRunFolder's retries fails here (three runs of
  // three); Node 26's did not, in three.
  it('is removed while a process still writes into it, once the writing stops', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'lead-enrich-run-'));
    const cache = path.join(folder, 'node-compile-cache');
    fs.mkdirSync(cache);
    const writer = `
      const fs = require('node:fs');
      const until = Date.now() + 400;
      let n = 0;
      try { while (Date.now() < until) fs.writeFileSync(${JSON.stringify(cache)} + '/' + (n++), 'x'); } catch {}
      console.log(n);`;
    const child = start(process.execPath, ['-e', writer], { stdin: 'ignore' });
    await until(() => fs.readdirSync(cache).length > 100, 'the writer to be writing');
    await removeRunFolder(folder);
    expect(fs.existsSync(folder)).toBe(false);
    expect((await child.result).code).toBe(0);
  });
});

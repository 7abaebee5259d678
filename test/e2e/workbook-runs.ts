// What the workbook tests share (workbook-paid-work, workbook-shows-what-it-holds): one sandbox per
// file with credits for thousands of rows, a fresh folder per run removed after each test, and the
// words a run leaves on stderr without their timestamps.
import fs from 'node:fs';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Sandbox } from '../../src/sandbox/server.js';
import { makeTempDir } from '../helpers/files.js';
import { closeAll, lookupsSeen, sandbox } from './reliability/support.js';

/** Registers the file's hooks; `sandbox()` is the file's sandbox once its tests run. */
export function workbookRuns(prefix: string): { sandbox: () => Sandbox; tempDir: () => string; lookups: () => number } {
  let s: Sandbox | undefined;
  beforeAll(async () => {
    s = await sandbox({ credits: 1_000_000 });
  });
  afterAll(closeAll);
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  return {
    sandbox: () => s!,
    tempDir: () => {
      const dir = makeTempDir(prefix);
      dirs.push(dir);
      return dir;
    },
    // Lookups the sandbox has answered so far.
    lookups: () => lookupsSeen(s!),
  };
}

/** A stderr line without the timestamp a run outside a terminal puts first. */
export const unstamped = (line: string): string => line.replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z /, '');

/** The files a run left in `dir`, hidden ones (temporary files, locks) included. */
export const leftIn = (dir: string): string[] => fs.readdirSync(dir).sort();

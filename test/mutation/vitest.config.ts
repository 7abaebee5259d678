// The mutation run's tests: the unit and integration projects of test/vitest.config.ts, as they
// are there (a mutant must be caught by tests that run in-process, in seconds), without the e2e
// project, whose CLI runs dist/ and so never sees a mutant of src/. StrykerJS sets its own pool
// size (one worker per Stryker process) and turns bail on; the files run quickest first
// (shortest-first.ts).
import { defineConfig } from 'vitest/config';
import suite from '../vitest.config.js';
import ShortestFirst from './shortest-first.js';

const fast = new Set(['unit', 'integration']);
// One test at a time, even in a file that runs its tests concurrently: StrykerJS names the test
// that covers a mutant by the one running when the mutant's code runs, and of two tests at once
// it would name the wrong one (or none, and make the mutant static: every test then runs for it).
// No unit or integration file runs its tests concurrently now, so that a run configured otherwise
// attributes them right too; this keeps a later one from changing the score.
const projects = (suite.test?.projects ?? [])
  .filter((project) => typeof project === 'object' && 'test' in project && fast.has(String(project.test?.name)))
  .map((project) => (typeof project === 'object' && 'test' in project ? { ...project, test: { ...project.test, maxConcurrency: 1 } } : project));
if (projects.length !== fast.size) throw new Error('test/mutation/vitest.config.ts: test/vitest.config.ts no longer has the unit and integration projects');

export default defineConfig({ ...suite, test: { ...suite.test, projects, sequence: { ...suite.test?.sequence, sequencer: ShortestFirst } } });

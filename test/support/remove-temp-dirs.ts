// A setup file of every project: the folders made through test/helpers/temp-dirs.ts go when the
// test file that made them ends.
import { afterAll } from 'vitest';
import { hangBound } from '../helpers/processes.js';
import { removeTempDirs } from '../helpers/temp-dirs.js';

// Ten minutes at most: the hook's own timeout (60 s in the e2e project) failed a CI run whose
// tests had all passed, while it removed a fresh clone's node_modules on a loaded machine.
afterAll(() => removeTempDirs(), hangBound(600_000));

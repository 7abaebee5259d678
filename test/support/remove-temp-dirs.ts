// A setup file of every project: the folders made through test/helpers/temp-dirs.ts go when the
// test file that made them ends.
import { afterAll } from 'vitest';
import { removeTempDirs } from '../helpers/temp-dirs.js';

afterAll(() => removeTempDirs());

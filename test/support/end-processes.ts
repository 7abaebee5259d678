// A setup file of every project: the processes a test starts (through test/helpers/processes.ts)
// are killed, with what they started, when the test ends, whether it passed, failed or timed out;
// those started outside a test (a beforeAll's server) when the test file ends.
import { afterAll, aroundEach } from 'vitest';
import { endFileProcesses, withOwnProcesses } from '../helpers/processes.js';

aroundEach((runTest) => withOwnProcesses(runTest));
afterAll(() => endFileProcesses());

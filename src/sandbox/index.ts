// The package's `lead-enrich/sandbox` entry: the test server, apart from the library's main entry
// so that a program that only enriches does not load 1.7 k lines of made-up service, and so that
// the sandbox's names never sit beside the library's. Every type a signature here mentions is
// exported, so that callers can name it.
export { startSandbox } from './server.js';
export type { Sandbox, SandboxOptions, SandboxStats, SandboxWindowStats, FaultKind, OutageKind, OutageOptions, SandboxTruth, ServedAnswer } from './server.js';
export type { SandboxKeyOperation } from './keys.js';
export type { SandboxCosts } from './account-data.js';
export type { NotFoundShape } from './service-shapes.js';

// The library API: everything the CLI does is available to programs too.
export { enrich } from './run/enrich.js';
export type { EnrichOptions, EnrichProgress, EnrichTuning } from './options/enrich-options.js';
export type { EnrichSummary } from './run/summary.js';
export { planRun } from './plan/dry-run.js';
export type { DryRunOptions, DryRunPlan } from './plan/dry-run.js';
export { LeadClient, isLeadFound, validateResolveTimeout } from './api/client.js';
export type { ClientOptions, OperationInput, OperationOutput } from './api/client.js';
export { validateBaseUrl } from './api/transport.js';
export * from './api/errors.js';
export type * from './api/types.js';
export { parseServiceLimits, parseLimitCount, retryAtFrom } from './api/limits.js';
export { detectTarget, normalizeKey, normalizeDomain } from './plan/plan.js';
export type { LookupKind, LookupTarget } from './plan/plan.js';
export { ResultStore } from './store/result-store.js';
export type { StoredResult, ResultStoreOptions } from './store/result-store.js';
export { defaultStorePath } from './store/default-path.js';
export { startSandbox } from './sandbox/server.js';
export type { Sandbox, SandboxOptions, SandboxStats, FaultKind } from './sandbox/server.js';

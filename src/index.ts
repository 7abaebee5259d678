// The library API: everything the CLI does is available to programs too.
export { enrich } from './pipeline/enrich.js';
export type { EnrichOptions, EnrichSummary, EnrichProgress, EnrichTuning } from './pipeline/enrich.js';
export { planRun } from './pipeline/dry-run.js';
export type { DryRunOptions, DryRunPlan } from './pipeline/dry-run.js';
export { LeadClient, isLeadFound, validateResolveTimeout } from './api/client.js';
export type { ClientOptions, OperationInput, OperationOutput } from './api/client.js';
export { validateBaseUrl } from './api/transport.js';
export * from './api/errors.js';
export type * from './api/types.js';
export { parseServiceLimits, parseLimitCount, retryAtFrom } from './api/limits.js';
export { detectTarget, normalizeKey, normalizeDomain } from './pipeline/plan.js';
export type { LookupKind, LookupTarget } from './pipeline/plan.js';
export { ResultStore } from './store/result-store.js';
export type { StoredResult, ResultStoreOptions } from './store/result-store.js';
export { defaultStorePath } from './store/default-path.js';
export { startSandbox } from './sandbox/server.js';
export type { Sandbox, SandboxOptions, SandboxStats, FaultKind } from './sandbox/server.js';

// The library API: everything the CLI does is available to programs too. Every type an exported
// signature mentions is exported too, so that callers can name it (test/package.test.ts checks).
// The sandbox has an entry of its own, `lead-enrich/sandbox` (src/sandbox/index.ts).
export { enrich } from './run/enrich.js';
export { enrichRows } from './run/enrich-rows.js';
export type { EnrichRowsOptions, RowChange, RowResult } from './run/enrich-rows.js';
export type { RowStatus, Billing } from './core/rows.js';
export type { InputRow } from './read/rows-source.js';
export type { EnrichOptions, EnrichProgress, EnrichTuning, Extra } from './run/enrich-options.js';
export type { EnrichSummary } from './run/summary.js';
export type { RunReport } from './report/run-report.js';
export { planRun } from './run/dry-run.js';
export type { DryRunOptions, DryRunPlan } from './run/dry-run.js';
export { isLeadFound } from './api/client.js';
export { validateResolveTimeout } from './api/resolve-timeout.js';
export type { OperationInput, OperationOutput } from './api/client.js';
export { LeadClient } from './lookup/lead-client.js';
export type { ClientRetryOptions, LeadClientOptions } from './lookup/lead-client.js';
export { validateBaseUrl } from './api/base-url.js';
export type { ApiResponse, TransportOptions } from './api/transport.js';
export * from './api/errors.js';
export type * from './api/types.js';
export { parseServiceLimits, parseLimitCount, retryAtFrom } from './api/limits.js';
export type { RateHeaders, RateLimitFacts } from './api/limits.js';
export { detectTarget, normalizeKey, normalizeDomain } from './plan/plan.js';
export type { DetectOptions, LookupKind, LookupTarget, NormalizeResult, Shard } from './plan/plan.js';
export { ResultStore } from './store/result-store.js';
export type { StoredResult, ResultStoreOptions, ResultStoreStats } from './store/result-store.js';
export { defaultStorePath } from './store/default-path.js';

// The one place that retries: transient failures with backoff, 429s at once (the gate below holds
// them until the server's pause ends). Permanent failures pass through (retry-policy.ts).
import type { RetryPolicy } from './retry-policy.js';
import type { RequestCounters, Send } from './request.js';

export function withRetry(next: Send, policy: RetryPolicy, counters: RequestCounters, signal: AbortSignal): Send {
  const hooks = {
    signal,
    onRetry: () => {
      counters.retries += 1;
    },
  };
  return (request) => policy.run(() => next(request), hooks);
}

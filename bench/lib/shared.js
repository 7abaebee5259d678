// Measurements one scenario can reuse from another within the same bench run: e.g. the memory
// scenario's store-answered 1 M figure is the peak RSS of the known-rows scenario's enrich runs
// (the same runner, input and store), so running them again would only cost time.
/** rows -> enrich-runner results (bench/lib/enrich-runner.js output) of store-answered runs. */
export const storeAnsweredRuns = new Map();
/** rows -> enrich-runner results of sandbox-answered runs (fast sandbox, fresh store). */
export const sandboxAnsweredRuns = new Map();

export function record(map, rows, result) {
  if (!map.has(rows)) map.set(rows, []);
  map.get(rows).push(result);
}

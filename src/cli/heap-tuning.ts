// The CLI owns its process, so it may tune the V8 heap for what an enrich run does; the library
// does not (a host program's heap is the host's business: README "Library" says how to do the same).
//
// Why: a run that looks rows up allocates fast (got builds an options object, a request, emitters
// and timers per call) but keeps little: the live heap after a full collection is 13–15 MB. V8's
// default lets the old generation grow to ~4× the live size before it collects again (collection is
// cheap here, so it trades memory for nothing we need), which put a network-answered run at
// ~185 MB peak RSS. Capping the growth factor at 1.5× keeps it near 140 MB at no measurable CPU
// cost (bench/analysis.md, issue 16). It is a growth factor, not a limit: a run that really needs
// more heap still gets it. `--heap-growing-percent` is read by V8 at each full collection, so
// setting it after start-up works (unlike `--max-semi-space-size`, which is fixed at start).
import v8 from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;

export function tuneHeapForEnrich(): void {
  // A user's own `node --heap-growing-percent=N` wins.
  if (process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent') || arg.startsWith('--heap_growing_percent'))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

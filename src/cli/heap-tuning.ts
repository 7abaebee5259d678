// The CLI owns its process, so it may tune the V8 heap for what an enrich run does; the library
// does not (a host program's heap is the host's business: docs/library.md says how to do the same).
//
// Why: a run that looks rows up allocates fast (got builds an options object, a request, emitters
// and timers per call) but keeps little: the live heap after a full collection is 13–15 MB. V8's
// default lets the old generation grow to ~4× the live size before it collects again (collection is
// cheap here, so it trades memory for nothing we need), which put a network-answered run at
// ~185 MB peak RSS. Capping the growth factor at 1.5× keeps it near 140 MB at no measurable CPU
// cost (bench/analysis.md). It is a growth factor, not a limit: a run that really needs
// more heap still gets it. `--heap-growing-percent` is read by V8 at each full collection, so
// setting it after start-up works (unlike `--max-semi-space-size`, which is fixed at start).
//
// Only for inputs of 256 KiB or more (a few thousand rows), or stdin: a small file ends before its
// heap could grow that far, and on a tiny heap the cap means a full collection every few MB, whose
// pauses measurably add a refused request or two per window to a 429 storm at 100 requests a second
// (test/reliability/rate-limit-storms.test.ts on a loaded machine).
import fs from 'node:fs';
import v8 from 'node:v8';

export const HEAP_GROWING_PERCENT = 50;
/** Inputs smaller than this keep V8's defaults. */
export const TUNE_FROM_BYTES = 256 * 1024;

/** Whether an enrich run on `input` (a path, '-' for stdin) gets the tuned heap. */
export function wantsHeapTuning(input: unknown): boolean {
  if (input === '-' || typeof input !== 'string') return true;
  try {
    return fs.statSync(input).size >= TUNE_FROM_BYTES;
  } catch {
    return false; // the run itself reports an unreadable input
  }
}

export function tuneHeapForEnrich(input: unknown): void {
  if (!wantsHeapTuning(input)) return;
  // A user's own `node --heap-growing-percent=N` wins.
  if (process.execArgv.some((arg) => arg.startsWith('--heap-growing-percent') || arg.startsWith('--heap_growing_percent'))) return;
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

// How a run tells the user how it goes while it runs: one line redrawn in place on a terminal, a
// plain status line now and then otherwise (cron, CI; stamped by stderr-lines.ts), nothing with
// --quiet. The numbers come from progress-model.ts, the words from progress-line.ts.
import type { EnrichProgress } from '../run/enrich-options.js';
import type { LineWriter } from './stderr-lines.js';
import { ProgressModel, type ProgressFrame } from './progress-model.js';
import { plainLine, terminalLine } from './progress-line.js';
import { logText } from '../core/log-lines.js';

export interface ProgressView {
  update(progress: EnrichProgress): void;
  /** A line of its own (a warning, "API unavailable"), above the progress line on a terminal. */
  print(line: string): void;
  stop(): void;
}

/** What the terminal view writes to: process.stderr on a terminal. */
export interface TerminalStream {
  write(text: string): unknown;
  readonly columns?: number | undefined;
  on(event: 'resize', listener: () => void): unknown;
  off(event: 'resize', listener: () => void): unknown;
}

/** Without a terminal: a status line every so often, and at each tenth of the rows once lines have begun. */
export interface PlainPacing {
  everyMs: number;
  /** Never two lines closer than this, whatever the tenths say. */
  minGapMs: number;
}

export const PLAIN_PACING: PlainPacing = { everyMs: 10_000, minGapMs: 1_000 };

export type ProgressMode = { kind: 'quiet' } | { kind: 'plain'; pacing?: PlainPacing } | { kind: 'terminal'; stream: TerminalStream };

export function progressView(say: LineWriter, mode: ProgressMode, now: () => number = Date.now): ProgressView {
  if (mode.kind === 'quiet') return { update() {}, print: say, stop() {} };
  const model = new ProgressModel(now);
  if (mode.kind === 'plain') return plainView(say, model, mode.pacing ?? PLAIN_PACING, now);
  return terminalView(mode.stream, model);
}

/**
 * One line, redrawn in place (carriage return, then erase to the end of the line) at the
 * terminal's width, again whenever the terminal is resized. It ends with a newline at stop().
 */
function terminalView(stream: TerminalStream, model: ProgressModel): ProgressView {
  let last: ProgressFrame | undefined;
  const width = () => stream.columns || 80;
  const draw = () => {
    if (last) stream.write(`\r${terminalLine(last, width())}\x1b[K`);
  };
  const onResize = () => draw();
  stream.on('resize', onResize);
  return {
    update(p) {
      last = model.frame(p);
      draw();
    },
    print(line) {
      // Written here, not through CliIo.err: escaped as every line is (core/log-lines.ts).
      stream.write(`${last ? '\r\x1b[K' : ''}${logText(line)}\n`);
      draw();
    },
    stop() {
      stream.off('resize', onResize);
      if (last) stream.write('\n');
      last = undefined;
    },
  };
}

/**
 * The first line once `everyMs` has passed (a run that ends sooner, or fails at once with its one
 * line, prints none); then a line every `everyMs`, or sooner when another tenth of the rows is
 * done (never two within `minGapMs`); and the run's last snapshot once any line was written.
 */
function plainView(say: LineWriter, model: ProgressModel, pacing: PlainPacing, now: () => number): ProgressView {
  let lastAt = now();
  let lastTenth = 0;
  let printed = false;
  let finalShown = false;
  return {
    update(p) {
      const frame = model.frame(p);
      const at = now();
      const tenth = frame.percent === undefined ? 0 : Math.floor(frame.percent / 10);
      // The run's last snapshot (its credits the summary's), not the first frame at 100 %: that one
      // can come before the last balance reading.
      const final = p.final === true;
      // 100 % is left to the last snapshot: a frame at 100 % before it would say other credits.
      const nextTenth = tenth > lastTenth && tenth < 10 && at - lastAt >= pacing.minGapMs;
      const due = (!final && frame.percent !== 100 && at - lastAt >= pacing.everyMs) || (printed && (nextTenth || final));
      if (!due || finalShown) return;
      say(plainLine(frame));
      lastAt = at;
      lastTenth = tenth;
      printed = true;
      finalShown = final;
    },
    print: say,
    stop() {},
  };
}

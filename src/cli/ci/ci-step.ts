// `enrich` as a CI step (docs/cli-contract.md, "In a CI step"): the job summary of every outcome,
// the step's outputs, the annotations of the sidecar's codes and the progress in a log group
// (GitHub Actions), or a collapsed section and the summary in a file (GitLab CI, --ci-summary).
// Never in the way: a file that cannot be written is one warning line, and the run, its exit
// status, its --json and -q are as without it; with -q nothing more is written to stderr (no
// group, no annotation), only the files.
import fs from 'node:fs';
import path from 'node:path';
import { environment } from '../../api/environment.js';
import type { EnrichOptions } from '../../run/enrich-options.js';
import { exitStatusOf } from '../../run/exit-status.js';
import type { EnrichSummary } from '../../run/summary.js';
import type { CliIo } from '../io.js';
import { ROWS_NAMED, SHOWN_PER_LEVEL, annotationLines, codeCounts, type CodeCount } from './annotations.js';
import { fatalSection, runSection } from './job-summary.js';
import { firstRowsByCode } from './sidecar-rows.js';
import { fatalOutputs, outputsText, runOutputs } from './step-outputs.js';
import { workflowCommand } from './workflow-commands.js';

/** The CI system a run speaks to (ci-choice.ts). */
export type CiSystem = 'github' | 'gitlab' | 'none';

export interface CiStepOptions {
  system: CiSystem;
  /** --ci-summary: a file the summary is appended to as well, under any system. */
  summaryFile: string | undefined;
  quiet: boolean;
  io: CliIo;
  /** A warning line (a file that could not be written). */
  warn(line: string): void;
}

type Fatal = { status: number; code: string; message: string };

/** GitLab's collapsed section: its markers are ANSI-escaped lines the job log reads. */
const GITLAB_SECTION = 'lead_enrich_progress';

export class CiStep {
  readonly #o: CiStepOptions;
  readonly #workspace: string;

  constructor(options: CiStepOptions) {
    this.#o = options;
    const workspace = options.system === 'github' ? environment('GITHUB_WORKSPACE') : options.system === 'gitlab' ? environment('CI_PROJECT_DIR') : undefined;
    this.#workspace = path.resolve(workspace ?? process.cwd());
  }

  /** Before the progress lines: a group (GitHub) or a collapsed section (GitLab). */
  progressStarts(): void {
    const seconds = Math.floor(Date.now() / 1000);
    if (this.#o.system === 'github') this.#command('::group::lead-enrich progress');
    if (this.#o.system === 'gitlab') this.#command(`\x1b[0Ksection_start:${seconds}:${GITLAB_SECTION}[collapsed=true]\r\x1b[0Klead-enrich progress`);
  }

  /** After them: the summary's lines come outside the group. */
  progressEnds(): void {
    const seconds = Math.floor(Date.now() / 1000);
    if (this.#o.system === 'github') this.#command('::endgroup::');
    if (this.#o.system === 'gitlab') this.#command(`\x1b[0Ksection_end:${seconds}:${GITLAB_SECTION}\r\x1b[0K`);
  }

  /** A finished run (any exit status but a fatal 1): its summary section, its outputs, its annotations. */
  async finished(summary: EnrichSummary, options: EnrichOptions): Promise<void> {
    await this.#unlessFailing(async () => {
      const codes = codeCounts(summary);
      this.#summary(runSection(summary, codes, { shownPath: (file) => this.#shown(file) }));
      if (this.#o.system !== 'github') return;
      this.#outputs(outputsText(runOutputs(summary, exitStatusOf(summary))));
      for (const line of await this.#annotations(summary, codes, options)) this.#command(line);
    });
  }

  /** A fatal failure, once its line is out: its section, its outputs and one `::error`. */
  async failed(fatal: Fatal): Promise<void> {
    await this.#unlessFailing(async () => {
      this.#summary(fatalSection(fatal));
      if (this.#o.system !== 'github') return;
      this.#outputs(outputsText(fatalOutputs(fatal)));
      this.#command(workflowCommand('error', { title: `lead-enrich (${fatal.code})` }, fatal.message));
    });
  }

  /** What the step writes never changes the run's outcome: a failure of its own is one warning. */
  async #unlessFailing(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.#o.warn(`could not tell the CI step how the run went: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** A command on stderr, as it is: none with -q, which writes nothing more there. */
  #command(line: string): void {
    if (!this.#o.quiet) this.#o.io.command?.(line);
  }

  #summary(markdown: string): void {
    if (this.#o.system === 'github') this.#append('GITHUB_STEP_SUMMARY', 'the job summary', markdown);
    if (this.#o.summaryFile !== undefined) this.#appendTo(this.#o.summaryFile, 'the job summary (--ci-summary)', markdown);
  }

  #outputs(text: string): void {
    this.#append('GITHUB_OUTPUT', 'the step outputs', text);
  }

  /** Appends to the file a variable names, when it names one. */
  #append(variable: string, what: string, text: string): void {
    const file = environment(variable);
    if (file !== undefined) this.#appendTo(file, `${what} ($${variable})`, text);
  }

  #appendTo(file: string, what: string, text: string): void {
    try {
      fs.appendFileSync(file, text);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      this.#o.warn(`could not write ${what} to ${file}: ${why}; the run and its exit status are as without --ci`);
    }
  }

  /** A path as the summary and the annotations show it: relative to the workspace when inside it. */
  #shown(file: string): string {
    const relative = path.relative(this.#workspace, path.resolve(file));
    return relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
  }

  /** The annotations, their rows read back from the sidecar and their lines from the input; without them when either cannot be read. */
  async #annotations(summary: EnrichSummary, codes: readonly CodeCount[], options: EnrichOptions): Promise<string[]> {
    const annotated = [
      ...codes.filter((c) => c.level === 'error').slice(0, SHOWN_PER_LEVEL),
      ...codes.filter((c) => c.level === 'warning').slice(0, SHOWN_PER_LEVEL),
    ];
    if (annotated.length === 0) return [];
    const sidecar = summary.errorsFile;
    const counts = new Map(annotated.map((c) => [c.code, c.count]));
    const rows =
      sidecar === undefined ? new Map<string, number[]>() : await firstRowsByCode(sidecar, counts, ROWS_NAMED).catch(() => new Map<string, number[]>());
    const { rowLines } = await import('../../run/row-lines.js');
    const firsts = [...rows.values()].flatMap((list) => list.slice(0, 1));
    const lines = await rowLines(options, firsts).catch(() => new Map<number, number>());
    const input = summary.input === '-' || summary.input === '(stream)' ? undefined : this.#shown(summary.input);
    return annotationLines(codes, { file: input, sidecar: sidecar === undefined ? undefined : this.#shown(sidecar), rows, lines });
  }
}

// Which CI system `enrich` speaks to (--ci, the config file's `ci`, else what the environment says)
// and whether a job summary goes to a file of --ci-summary. Loaded with the command: it reads two
// options and two variables. The step itself (ci-step.ts and what it loads) is imported only when
// there is one, so that a run outside CI loads none of it and starts no slower for it.
import { environment } from '../../api/environment.js';
import type { ResolvedConfig } from '../../options/config-file.js';
import { readOption } from '../../options/option-table.js';
import { defaultOf } from '../../options/registry.js';
import type { CliIo } from '../io.js';
import type { CiStep, CiSystem } from './ci-step.js';

/** `auto`: GitHub Actions under GITHUB_ACTIONS=true, GitLab CI under GITLAB_CI=true, else none. */
export function ciSystem(choice: 'auto' | CiSystem): CiSystem {
  if (choice !== 'auto') return choice;
  if (environment('GITHUB_ACTIONS') === 'true') return 'github';
  if (environment('GITLAB_CI') === 'true') return 'gitlab';
  return 'none';
}

export interface CiArgs {
  ci?: string | undefined;
  ciSummary?: string | undefined;
  quiet?: boolean | undefined;
}

/**
 * The CI flags of a command line yargs refused (a usage mistake in `enrich`), read as typed:
 * `--ci X`, `--ci=X`, `--ci-summary FILE`, `-q`, before any `--`.
 */
export function ciArgsOf(argv: readonly string[]): CiArgs {
  const end = argv.indexOf('--');
  const args = end < 0 ? argv : argv.slice(0, end);
  const flagValue = (flag: string) => {
    const at = args.findLastIndex((arg) => arg === flag || arg.startsWith(`${flag}=`));
    if (at < 0) return undefined;
    return args[at] === flag ? args[at + 1] : args[at]!.slice(flag.length + 1);
  };
  return { ci: flagValue('--ci'), ciSummary: flagValue('--ci-summary'), quiet: args.some((arg) => arg === '-q' || arg === '--quiet') };
}

/**
 * The run's CI step, or undefined when it speaks to none and writes no summary file. It is told of
 * a fatal failure (CliIo.onFatal) from now on. `config`: the config file's values, unless reading
 * them failed (then the flags and the environment decide, so that the failure is told all the same).
 */
export async function openCiStep(io: CliIo, args: CiArgs, config: ResolvedConfig | undefined, warn: (line: string) => void): Promise<CiStep | undefined> {
  const fromFile = <K extends 'ci' | 'ciSummary'>(name: K) => (config === undefined ? undefined : readOption(name, config.file[name], config.fileDoor));
  const choice = readOption('ci', args.ci, 'flag') ?? fromFile('ci') ?? defaultOf('ci')!;
  const summaryFile = readOption('ciSummary', args.ciSummary, 'flag') ?? fromFile('ciSummary');
  const system = ciSystem(choice);
  if (system === 'none' && summaryFile === undefined) return undefined;
  const { CiStep } = await import('./ci-step.js');
  const step = new CiStep({ system, summaryFile, quiet: args.quiet ?? false, io, warn });
  io.onFatal = (fatal) => step.failed(fatal);
  return step;
}

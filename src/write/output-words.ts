// The words the writer's refusals use for what the reader can do instead, as the reader gives it:
// a command line's flags, or a program's options (api/caller-words.ts).
import { said } from '../api/caller-words.js';
import { optionWord } from '../options/option-table.js';

/** The options that name a file the run writes. */
export type OutputOption = 'output' | 'errors' | 'changes' | 'report';

/** Where the reader names the output and the sidecar. */
export const OUTPUTS_GIVEN = (): string => said({ cli: 'with -o / --errors', library: 'for output / errors' });

/** Where the reader names the output at hand: the enriched output and the sidecar together, as they are given together. */
export const PATH_GIVEN = (option: OutputOption): string => (option === 'output' || option === 'errors' ? OUTPUTS_GIVEN() : `with ${optionWord(option)}`);

/** The way out of a workbook the writer cannot make: a CSV output. */
export const CSV_INSTEAD = (): string => said({ cli: 'write CSV instead (-o FILE.csv)', library: 'write CSV instead (an output ending .csv)' });

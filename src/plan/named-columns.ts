// Input columns named by an option (--fill's columns, --only-missing): found in the header by
// their exact name, or refused before any request with the closest name and the header's list.
import { ConfigError } from '../api/errors.js';
import { didYouMean } from '../options/did-you-mean.js';
import { describeHeader } from './detect.js';

/** The index of input column `name` (its first, when the header repeats it); ConfigError naming `option` when there is none. */
export function inputColumnIndex(header: readonly string[], name: string, option: string): number {
  const index = header.indexOf(name);
  if (index >= 0) return index;
  const guess = didYouMean(name, header);
  throw new ConfigError(
    `Invalid option ${option}: the input has no column named '${name}'${guess ? ` (did you mean ${guess}?)` : ''}; its columns: ${describeHeader(header)}`,
  );
}

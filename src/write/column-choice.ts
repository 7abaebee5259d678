// --prefix and --fields, checked against the run's own columns before anything is looked up
// (docs/cli-contract.md, "Added column names"): a name --fields does not know is refused with the
// closest one; an added column whose name equals an input column is refused with --prefix.
import { ConfigError } from '../api/errors.js';
import { didYouMean } from '../options/did-you-mean.js';
import type { LookupKind } from '../core/kinds.js';
import { addedColumnNames, isMemberField, type ColumnChoice, type ColumnFlags } from './columns.js';

export function checkColumnChoice(
  kind: LookupKind,
  extras: ColumnFlags,
  choice: ColumnChoice,
  inputHeader: readonly string[],
): void {
  const known = addedColumnNames(kind, extras);
  for (const name of choice.fields ?? []) {
    if (known.includes(name) || isMemberField(name)) continue;
    const extra = /^(mx|whois)_/.exec(name)?.[1];
    const hint = extra ? `: add --with ${extra}` : name === 'lead_changed' ? ': add --changes FILE' : didYouMean(name, known) ? ` (did you mean ${didYouMean(name, known)}?)` : '';
    throw new ConfigError(`Invalid option --fields: this run adds no column named '${name}'${hint}; it adds ${known.join(', ')}`);
  }
  const prefix = choice.prefix ?? '';
  const written = choice.fields ? ['lead_status', ...choice.fields.map((name) => (isMemberField(name) ? name.replaceAll('.', '_') : name)), ...(extras.changed ? ['lead_changed'] : [])] : known;
  const clash = written.map((name) => `${prefix}${name}`).find((name) => inputHeader.includes(name));
  if (clash !== undefined) {
    // Only --prefix always works: --fields keeps lead_status whatever it lists, and leaves out the
    // very columns the run was asked for. The prefix suggested is one that clashes with nothing.
    const free = freePrefix(written, inputHeader);
    throw new ConfigError(`The input already has a column named '${clash}', which this run would add again: give --prefix ${free} (or another prefix)`);
  }
}

/** `new_`, else `new2_`, `new3_`, ...: the first prefix under which no added column is in the header. */
function freePrefix(added: readonly string[], inputHeader: readonly string[]): string {
  for (let n = 1; ; n += 1) {
    const prefix = n === 1 ? 'new_' : `new${n}_`;
    if (!added.some((name) => inputHeader.includes(`${prefix}${name}`))) return prefix;
  }
}

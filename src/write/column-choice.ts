// --prefix and --fields, checked against the run's own columns before anything is looked up
// (docs/cli-contract.md, "Added column names"): a name --fields does not know is refused with the
// closest one; an added column whose name equals an input column is refused with --prefix.
import { ConfigError } from '../api/errors.js';
import { didYouMean } from '../options/did-you-mean.js';
import { optionAsked, optionWord } from '../options/option-table.js';
import { addWith } from './cell-fill.js';
import type { LookupKind } from '../core/kinds.js';
import { addedColumnNames, fieldColumn, isMemberField, type ColumnChoice, type ColumnFlags } from './columns.js';

export function checkColumnChoice(kind: LookupKind, extras: ColumnFlags, choice: ColumnChoice, inputHeader: readonly string[]): void {
  const known = addedColumnNames(kind, extras);
  for (const name of choice.fields ?? []) {
    if (known.includes(name) || isMemberField(name)) continue;
    const extra = /^(mx|whois)_/.exec(name)?.[1];
    const hint = extra
      ? `: ${addWith(extra)}`
      : name === 'lead_changed'
        ? `: add ${optionAsked('changes', 'FILE', 'a file')}`
        : didYouMean(name, known)
          ? ` (did you mean ${didYouMean(name, known)}?)`
          : '';
    throw new ConfigError(`Invalid option ${optionWord('fields')}: this run adds no column named '${name}'${hint}; it adds ${known.join(', ')}`);
  }
  const prefix = choice.prefix ?? '';
  if (choice.fields) refuseSameColumnTwice(choice.fields);
  const written = choice.fields ? ['lead_status', ...choice.fields.map(fieldColumn), ...(extras.changed ? ['lead_changed'] : [])] : known;
  const clash = written.map((name) => `${prefix}${name}`).find((name) => inputHeader.includes(name));
  if (clash !== undefined) {
    // Only --prefix always works: --fields keeps lead_status whatever it lists, and leaves out the
    // very columns the run was asked for. The prefix suggested is one that clashes with nothing.
    const free = freePrefix(written, inputHeader);
    throw new ConfigError(
      `The input already has a column named '${clash}', which this run would add again: give ${optionAsked('prefix', free, `'${free}'`)} (or another prefix)`,
    );
  }
}

/** Two --fields names that add one column (`lead_name,lead.name`; the rule keeps a name given twice once) would give the output two columns of one name. */
function refuseSameColumnTwice(fields: readonly string[]): void {
  const seen = new Map<string, string>();
  for (const name of fields) {
    const column = fieldColumn(name);
    if (column === 'lead_status' && name !== 'lead_status') {
      throw new ConfigError(`Invalid option --fields: '${name}' adds the column lead_status, which every run writes (the row's status); leave it out`);
    }
    const first = seen.get(column);
    if (first !== undefined) {
      throw new ConfigError(`Invalid option --fields: '${first}' and '${name}' both add the column ${column}; give each column once`);
    }
    seen.set(column, name);
  }
}

/** `new_`, else `new2_`, `new3_`, ...: the first prefix under which no added column is in the header. */
function freePrefix(added: readonly string[], inputHeader: readonly string[]): string {
  for (let n = 1; ; n += 1) {
    const prefix = n === 1 ? 'new_' : `new${n}_`;
    if (!added.some((name) => inputHeader.includes(`${prefix}${name}`))) return prefix;
  }
}

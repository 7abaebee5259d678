// A value that breaks an option's rule. The parsers of option values (options/rules.ts,
// core/duration.ts) throw it with the rule in words; the door the value came through (a flag, the
// config file, the library) turns it into one ConfigError, so a bad value gets the same rule text
// from every door (options/option-table.ts).
export class RuleBroken extends Error {
  /** E.g. "must be a positive integer", or a whole sentence of its own for an odd case. */
  readonly rule: string;
  readonly got: unknown;
  /** The sentence stands alone: the door does not add ", got ..." (e.g. "email is named twice in 'email,email'; name each kind once"). */
  readonly whole: boolean;
  /** Said after what was got, e.g. " (a bare number is ambiguous: add a unit ...)". */
  readonly hint: string;

  constructor(rule: string, got: unknown, whole = false, hint = '') {
    super(rule);
    this.name = 'RuleBroken';
    this.rule = rule;
    this.got = got;
    this.whole = whole;
    this.hint = hint;
  }
}

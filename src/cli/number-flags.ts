// Number options are declared as numbers, so that --help says `[number]`; yargs then turns a value
// that is not one ("--rpm abc") into NaN. The rules that refuse it must still say what was typed:
// the value is taken back from the command line.

/** The option's value, or, where yargs made NaN of it, the text typed after `--name`. */
export function asTyped(name: string, value: unknown, argv: readonly string[] = process.argv.slice(2)): unknown {
  if (typeof value !== 'number' || !Number.isNaN(value)) return value;
  for (let i = argv.length - 1; i >= 0; i -= 1) {
    const token = argv[i]!;
    if (token === `--${name}`) return argv[i + 1] ?? '';
    if (token.startsWith(`--${name}=`)) return token.slice(name.length + 3);
  }
  return String(value);
}

// Number options are declared as numbers, so that --help says `[number]`; yargs then turns a value
// that is not one ("--rpm abc") into NaN, and "--rpm 1e1" or "--rpm 010" into 10. The rules read
// the text as typed, as they read a config file's or the library's value: a refusal quotes what the
// user typed ("got '0'"), the same words from every door.

/** The text typed after `--name` on the command line, else the value yargs parsed. */
export function asTyped(name: string, value: unknown, argv: readonly string[] = process.argv.slice(2)): unknown {
  if (typeof value !== 'number') return value;
  for (let i = argv.length - 1; i >= 0; i -= 1) {
    const token = argv[i]!;
    if (token === `--${name}`) return argv[i + 1] ?? '';
    if (token.startsWith(`--${name}=`)) return token.slice(name.length + 3);
  }
  return Number.isNaN(value) ? String(value) : value;
}

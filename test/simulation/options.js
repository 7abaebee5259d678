// The simulation's command line, and the command that replays a night from scratch.
import { freshSeed } from './random.js';

const USAGE = `usage: npm run simulate -- [--nights N] [--seed S] [--start YYYY-MM-DD] [--rows N] [--max-age D] [--recipes] [--keep-going] [--quiet] [--keep] [--plan] [--summary FILE]
  --nights N       nights to run (default 365)
  --seed S         the seed (default: a fresh one, printed)
  --start DATE     the first night's date (default: drawn from the seed, June 2027 to February 2028)
  --rows N         contacts on the first night (default: drawn from the seed, 120 to 200)
  --max-age D      the nightly command's --max-age: 7d, 14d or 30d (default: drawn from the seed)
  --recipes        the README's two cron recipes as written (the other line's budget, --max-age 90d
                   --changes), no fault: every change mailed once
  --keep-going     after a failing night, go on (and count the failures) instead of stopping
  --quiet          print failing nights only, then the figures
  --keep           keep the simulation's folder for a look afterwards (the store and the outputs
                   copied out of their tmpfs to store.kept/ and out.kept/)
  --plan           print the trace's hash and stop (no night is run)
  --summary FILE   write the figures, the conditions table and the first failure as JSON`;

function usage(message) {
  process.stderr.write(`simulate: ${message}\n${USAGE}\n`);
  process.exit(2);
}

const positive = (name, text) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) usage(`${name} takes a whole number above 0, got ${text}`);
  return n;
};

export function optionsOf(argv) {
  const options = {
    nights: 365,
    seed: undefined,
    start: undefined,
    rows: undefined,
    maxAge: undefined,
    recipes: false,
    keepGoing: false,
    quiet: false,
    keep: false,
    planOnly: false,
    summary: undefined,
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    const value = () => argv[++i] ?? usage(`${arg} needs a value`);
    if (arg === '--nights') options.nights = positive(arg, value());
    else if (arg === '--seed')
      options.seed = Number.isSafeInteger(Number(argv[i + 1])) ? Number(value()) : usage(`--seed takes a whole number, got ${argv[i + 1]}`);
    else if (arg === '--start') {
      const text = value();
      options.start = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : NaN;
      if (Number.isNaN(options.start)) usage(`--start takes a date such as 2028-02-10, got ${text}`);
      options.startText = text;
    } else if (arg === '--rows') options.rows = positive(arg, value());
    else if (arg === '--max-age')
      options.maxAge = ['7d', '14d', '30d'].includes(argv[i + 1]) ? value() : usage(`--max-age takes 7d, 14d or 30d, got ${argv[i + 1]}`);
    else if (arg === '--keep-going') options.keepGoing = true;
    else if (arg === '--recipes') options.recipes = true;
    else if (arg === '--quiet') options.quiet = true;
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--plan') options.planOnly = true;
    else if (arg === '--summary') options.summary = value();
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else usage(`unknown option ${arg}`);
  }
  options.seed ??= freshSeed();
  return options;
}

/** The command that runs the same seed from its first night to `night`. */
export function replayCommand(options, night) {
  const pinned = [
    options.startText && `--start ${options.startText}`,
    options.rows && `--rows ${options.rows}`,
    options.maxAge && `--max-age ${options.maxAge}`,
    options.recipes && '--recipes',
  ]
    .filter(Boolean)
    .join(' ');
  return `npm run simulate -- --seed ${options.seed} --nights ${night}${pinned ? ` ${pinned}` : ''}`;
}

// The command lines of a night, on one store. The simulation's nightly command: the README's two
// cron lines folded into one (day and month budgets, the credit reserve, --max-age, --changes),
// and on some nights the other line before it, with the same budgets and no --changes (the
// default --max-age, --max-errors 5%). --patience is seconds here, not the default's ten minutes:
// an outage of a simulated night lasts seconds of real time.
// With --recipes, the README's two recipes as written ("Cron", then "Nightly: what changed since
// the last check"): the first at 02:30 with its budgets, the second at 03:15 with --max-age 90d and
// --changes, whose changes file is mailed when it exits 0 or 5.
export function commandsOf(world, files) {
  const store = ['--store', files.store];
  const json = ['--json', '-q'];
  if (world.recipes) {
    return {
      second: ['enrich', files.contacts, '-o', files.out('nightly.csv'), '--max-errors', '5%', ...store, '--budget', `${world.dayBudget}/day`, ...json],
      main: ['enrich', files.contacts, '-o', files.out('contacts.enriched.csv'), '--max-age', '90d', '--changes', files.out('changes.csv'), ...store, ...json],
    };
  }
  const budgets = ['--budget', `${world.dayBudget}/day`, '--budget', `${world.monthBudget}/month`, '--min-credits', String(world.reserve)];
  const patience = ['--patience', world.patience];
  return {
    second: ['enrich', files.contacts, '-o', files.out('nightly.csv'), '--max-errors', '5%', ...store, ...budgets, ...patience, ...json],
    main: [
      'enrich',
      files.contacts,
      '-o',
      files.out('contacts.enriched.csv'),
      '--changes',
      files.out('changes.csv'),
      ...store,
      ...budgets,
      '--max-age',
      world.maxAge,
      ...patience,
      ...json,
    ],
  };
}

/** The output and sidecar a command writes, its --changes file (if any) and its --max-age. */
export function filesOf(args) {
  const value = (flag) => {
    const i = args.indexOf(flag);
    return i < 0 ? undefined : args[i + 1];
  };
  const output = value('-o');
  return { output, sidecar: output.replace(/\.csv$/, '.errors.csv'), changes: value('--changes'), maxAge: value('--max-age') ?? '30d' };
}

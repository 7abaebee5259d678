// The store's size after a year of nights (docs/reference.md, "A bounded ledger"): 1,000 charged
// calls a night for 365 nights, written through the built store's own code (dist/: a run's settles,
// committed in batches as a run commits them, the fold a run does as it opens its ledger), once
// folded as runs fold and once kept one row per call for good (as the ledger was before it was
// bounded). Prints both sizes: the file with its write-ahead log checkpointed, the ledger's rows,
// its days of totals and the bytes of its tables. `npm run build` first.
//
//   node bench/ledger-year.js [--calls 1000] [--nights 365]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ResultStore } from '../dist/store/result-store.js';

const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const CALLS = arg('calls', 1000);
const NIGHTS = arg('nights', 365);
const DAY = 86_400_000;
const START = Date.parse('2026-01-01T02:00:00Z');
const SERVICE = 'https://lead-api.example/v2';

function year(fold) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lead-enrich-ledger-year-'));
  const file = path.join(dir, 'results.sqlite');
  const clock = { now: START };
  const store = ResultStore.open({ path: file, now: () => clock.now });
  const began = Date.now();
  for (let night = 0; night < NIGHTS; night++) {
    clock.now = START + night * DAY;
    if (fold) store.spend().fold();
    for (let call = 0; call < CALLS; call++) {
      // A person at 4, 6 or 8 credits (none, one or two phones), as a night's answers come.
      const credits = 4 + 2 * ((night + call) % 3);
      store.settle({ hold: undefined, charge: { at: clock.now + call * 1_000, service: SERVICE, op: 'lookup_email', credits, runId: `night-${night}` } });
      if (call % 50 === 49) store.flush();
    }
    store.flush();
  }
  const size = store.spend().size();
  store.close();
  const bytes = fs.statSync(file).size + (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0);
  fs.rmSync(dir, { recursive: true, force: true });
  return { fold, rows: size.rows, days: size.days, ledgerBytes: size.bytes, fileBytes: bytes, seconds: (Date.now() - began) / 1000 };
}

const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
console.log(`${NIGHTS} nights at ${CALLS} charged calls each (${(NIGHTS * CALLS).toLocaleString('en-US')} calls), one service`);
for (const fold of [true, false]) {
  const r = year(fold);
  console.log(
    `${fold ? 'folded as runs fold' : 'one row per call for good'}: store ${mib(r.fileBytes)}, ledger ${r.rows.toLocaleString('en-US')} per-call rows + ${r.days} days of totals = ${mib(r.ledgerBytes)} (${r.seconds.toFixed(1)} s)`,
  );
}

// xlsx (issue 22): an .xlsx workbook in and an .xlsx out against the same rows as CSV in and CSV
// out, in the same run, every row answered by a pre-filled store (the known-rows case: what is
// measured is reading and writing, not the API). rows/s and peak RSS of the CLI process for each,
// rounds alternating the two; and the target: a 20,000-row workbook in and out under 250 MB peak
// RSS. Peak RSS = getrusage's ru_maxrss of the child (bench/lib/cli-runner.js).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSandbox } from '../../dist/sandbox/index.js';
import { contactsCsv, contactsXlsx, copyStoreFor, prefilledStore } from '../lib/data.js';
import { OUT_DIR, list, log, mb, median, num, pct, removeStore, runNode } from '../lib/util.js';

export const name = 'xlsx';

const LIMIT = 250 * 1024 * 1024;
const TARGET_ROWS = 20_000;

export async function run({ quick }) {
  const rows = quick ? 20_000 : 100_000;
  const rounds = quick ? 1 : 3;
  const sandbox = await startSandbox({ rpm: 10_000_000, credits: 1_000_000_000_000, threshold: 0 });
  const store = path.join(os.tmpdir(), `lead-enrich-bench-xlsx-${process.pid}.sqlite`);
  const results = { csv: [], xlsx: [] };
  let target;
  try {
    const enrichOnce = async (input, output, count) => {
      removeStore(store);
      await copyStoreFor(await prefilledStore(count), store, sandbox.baseUrl);
      const args = ['enrich', input, '-o', output, '--store', store, '--max-age', '100000d', '--base-url', sandbox.baseUrl, '--json', '-q'];
      const r = await runNode(['bench/lib/cli-runner.js', JSON.stringify({ args })], { json: true, env: { LEAD_API_TOKEN: sandbox.token } });
      const summary = JSON.parse(r.stdout.trim().split('\n').slice(0, -1).join('\n'));
      if (r.json.code !== 0 || summary.rows !== count || summary.billing.cached !== count || summary.requests !== 0) {
        throw new Error(
          `xlsx (${path.basename(input)} → ${path.basename(output)}): unexpected run: ${JSON.stringify({ code: r.json.code, rows: summary.rows, billing: summary.billing, requests: summary.requests })}`,
        );
      }
      for (const f of [output, output.replace(/\.(csv|xlsx)$/, '.errors.csv')]) fs.rmSync(f, { force: true });
      return { perSecond: (count * 1000) / r.json.ms, rss: r.json.maxRssBytes };
    };
    const csvIn = contactsCsv(rows);
    const xlsxIn = await contactsXlsx(rows);
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? ['csv', 'xlsx'] : ['xlsx', 'csv'];
      for (const kind of order) {
        results[kind].push(await enrichOnce(kind === 'csv' ? csvIn : xlsxIn, path.join(OUT_DIR, `xlsx-bench.enriched.${kind}`), rows));
      }
      log(
        `xlsx round ${i + 1}/${rounds}: CSV→CSV ${num(results.csv.at(-1).perSecond)} rows/s ${mb(results.csv.at(-1).rss)}, xlsx→xlsx ${num(results.xlsx.at(-1).perSecond)} rows/s ${mb(results.xlsx.at(-1).rss)}`,
      );
    }
    target = await enrichOnce(await contactsXlsx(TARGET_ROWS), path.join(OUT_DIR, 'xlsx-bench-20k.enriched.xlsx'), TARGET_ROWS);
    log(`xlsx ${num(TARGET_ROWS)} rows xlsx→xlsx: peak RSS ${mb(target.rss)}`);
  } finally {
    await sandbox.close();
    removeStore(store);
  }
  const speed = (kind) => median(results[kind].map((x) => x.perSecond));
  const rss = (kind) => median(results[kind].map((x) => x.rss));
  const ratio = median(results.xlsx.map((x, i) => x.perSecond / results.csv[i].perSecond));
  return {
    scenario: 'xlsx',
    figure: `${num(TARGET_ROWS)}-row workbook in and out: peak RSS ${mb(target.rss)}; ${num(rows)} rows xlsx→xlsx ${num(speed('xlsx'))} rows/s, peak RSS ${mb(rss('xlsx'))}`,
    target: `a ${num(TARGET_ROWS)}-row workbook in and out under ${mb(LIMIT)} peak RSS; rows/s and RSS against CSV→CSV`,
    comparison: `CSV→CSV of the same ${num(rows)} rows: ${num(speed('csv'))} rows/s, peak RSS ${mb(rss('csv'))}; xlsx→xlsx at ${pct(ratio)} of its rows/s (median of per-round ratios)`,
    met: target.rss < LIMIT,
    notes: [
      `Inputs: bench/out/contacts-${rows}.csv and bench/out/contacts-${rows}.xlsx (the same rows; the workbook written by exceljs's streaming writer with shared strings, as Excel writes them; the id a number)${quick ? ' (**--quick: 20 k rows instead of 100 k, one round**)' : ''}. Every row answered by the pre-filled store (bench/out/store-<rows>.sqlite), so the figures are the read and write paths. The CLI (bench/lib/cli-runner.js), whole process: start-up included in rows/s.`,
      `${rounds} round(s), the order alternating. rows/s: CSV→CSV ${list(results.csv, (x) => num(x.perSecond))}; xlsx→xlsx ${list(results.xlsx, (x) => num(x.perSecond))}. Peak RSS: CSV→CSV ${list(results.csv, (x) => mb(x.rss))}; xlsx→xlsx ${list(results.xlsx, (x) => mb(x.rss))}.`,
    ],
    raw: { rows, results, target },
  };
}

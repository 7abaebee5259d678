// encodings (issue 13): the known-rows run on the same rows saved three ways — UTF-8,
// windows-1252 and UTF-16LE with a byte-order mark, some first names accented — next to the plain
// ASCII file of the known-rows scenario and the csv-parse → csv-stringify passthrough of it, all
// in the same bench run, rotated, repeated. The acceptance: decoding must not slow plain UTF-8
// files measurably (UTF-8 is never transcoded: src/read/encoding.ts), and figures for the others.
import fs from 'node:fs';
import path from 'node:path';
import { startSandbox } from '../../dist/sandbox/index.js';
import { accentedCsv, contactsCsv, prefilledStore } from '../lib/data.js';
import { OUT_DIR, list, log, median, num, pct, runNode } from '../lib/util.js';

export const name = 'encodings';

const VARIANTS = ['ascii', 'utf-8', 'windows-1252', 'utf-16le'];

export async function run({ quick }) {
  const rows = quick ? 100_000 : 1_000_000;
  const rounds = 3;
  const ascii = contactsCsv(rows);
  const inputs = { ascii, 'utf-8': accentedCsv(rows, 'utf-8'), 'windows-1252': accentedCsv(rows, 'windows-1252'), 'utf-16le': accentedCsv(rows, 'utf-16le') };
  const store = await prefilledStore(rows);
  const sandbox = await startSandbox({});
  const output = path.join(OUT_DIR, 'encodings.enriched.csv');
  const passed = path.join(OUT_DIR, 'encodings.passthrough.csv');
  const perSecond = Object.fromEntries([...VARIANTS, 'passthrough'].map((v) => [v, []]));
  try {
    const runEnrich = async (variant) => {
      const r = await runNode(
        [
          'bench/lib/enrich-runner.js',
          JSON.stringify({ input: inputs[variant], output, store, baseUrl: sandbox.baseUrl, token: sandbox.token, maxAgeMs: 1e13 }),
        ],
        { json: true },
      );
      const j = r.json;
      if (j.rows !== rows || j.billing.cached !== rows || j.requests !== 0) {
        throw new Error(
          `encodings (${variant}): expected ${rows} rows all answered by the store, got rows ${j.rows}, billing ${JSON.stringify(j.billing)}, requests ${j.requests}`,
        );
      }
      return (rows * 1000) / j.enrichMs;
    };
    const runPassthrough = async () => {
      const r = await runNode(['bench/lib/passthrough-runner.js', JSON.stringify({ input: ascii, output: passed })], { json: true });
      if (r.json.rows !== rows) throw new Error(`passthrough: expected ${rows} rows, got ${r.json.rows}`);
      return (rows * 1000) / r.json.ms;
    };
    const order = ['passthrough', ...VARIANTS];
    for (let i = 0; i < rounds; i++) {
      // Rotate the order, so a slow phase of the machine does not always hit the same variant.
      const turn = [...order.slice(i % order.length), ...order.slice(0, i % order.length)];
      for (const v of turn) perSecond[v].push(v === 'passthrough' ? await runPassthrough() : await runEnrich(v));
      log(`encodings round ${i + 1}/${rounds}: ${order.map((v) => `${v} ${num(perSecond[v].at(-1))} rows/s`).join(', ')}`);
    }
  } finally {
    await sandbox.close();
    for (const f of [output, output.replace(/\.csv$/, '.errors.csv'), passed]) fs.rmSync(f, { force: true });
  }
  // Per round ratios (same round = same machine phase), then the median over rounds.
  const ratio = (a, b) => median(perSecond[a].map((x, i) => x / perSecond[b][i]));
  const toUtf8 = Object.fromEntries(VARIANTS.map((v) => [v, ratio(v, 'utf-8')]));
  const toPass = Object.fromEntries(VARIANTS.map((v) => [v, ratio(v, 'passthrough')]));
  const utf8Slowdown = 1 - ratio('utf-8', 'ascii');
  return {
    scenario: 'encodings',
    figure: `windows-1252 ${pct(toUtf8['windows-1252'])}, UTF-16LE ${pct(toUtf8['utf-16le'])} of UTF-8's rows/s; UTF-8 ${pct(ratio('utf-8', 'ascii'))} of plain ASCII's`,
    target: 'UTF-8 not measurably slower than ASCII (within 5 %); figures for the others',
    comparison: `of passthrough: ASCII ${pct(toPass.ascii)}, UTF-8 ${pct(toPass['utf-8'])}, windows-1252 ${pct(toPass['windows-1252'])}, UTF-16LE ${pct(toPass['utf-16le'])} (medians of per-round ratios)`,
    met: utf8Slowdown <= 0.05,
    notes: [
      `Inputs: ${num(rows)} rows${quick ? ' (**--quick: 100 k instead of 1 M**)' : ''}: bench/out/contacts-${rows}.csv (plain ASCII, the known-rows file) and the same rows with the first names Amelie, Jose, Zoe and Noah accented (Amélie, José, Zoë, Noé: ${pct(4 / 24)} of the rows) saved as UTF-8, windows-1252 and UTF-16LE with a byte-order mark (bench/out/contacts-${rows}-<encoding>.csv). Encodings detected by enrich (no --encoding); every row answered by the known-rows store (bench/out/store-${rows}.sqlite). Passthrough: csv-parse → csv-stringify of the ASCII file.`,
      `${rounds} rounds, each running the five in a rotated order; figure = median of the per-round ratios. rows/s per round: ${[...VARIANTS, 'passthrough'].map((v) => `${v} ${list(perSecond[v], (x) => num(x))}`).join('; ')}.`,
    ],
    raw: { rows, perSecond, toUtf8, toPass },
  };
}

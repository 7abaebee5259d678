// Child-process runner for the `known rows` baseline: the same CSV through a plain csv-parse →
// csv-stringify stream pipeline (defaults: arrays, no column mapping) into a file, nothing else.
// Usage: node bench/lib/passthrough-runner.js '<json {input, output}>'
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify';

const spec = JSON.parse(process.argv[2] ?? '{}');
const started = performance.now();
const parser = parse();
const stringifier = stringify();
await pipeline(fs.createReadStream(spec.input, { highWaterMark: 256 * 1024 }), parser, stringifier, fs.createWriteStream(spec.output));
const ms = performance.now() - started;
const usage = process.resourceUsage();
process.stdout.write(`${JSON.stringify({ ms, rows: parser.info.records - 1, maxRssBytes: usage.maxRSS * 1024 })}\n`);

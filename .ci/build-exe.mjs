// `npm run build:exe`: one executable file for the platform this runs on, which needs no Node, npm
// or node_modules on the machine that runs it (Node's single-executable applications).
// 1. The command line (dist/, built by `npm run build` first) and every dependency it loads at run
//    time in one ES module bundle (.ci/bundle.mjs), the lazy loads inside too: package.json comes
//    along, so the version is inlined.
// 2. The store check's worker as a bundle of its own, inlined as source text (there is no file
//    beside the executable to start a worker from).
// 3. `node --build-sea`: the bundle injected into a copy of this Node binary.
// Output: exe/lead-enrich (exe/lead-enrich.exe on Windows).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { bundle, root } from './bundle.mjs';

const outDir = path.join(root, 'exe');
const work = path.join(outDir, 'work');
const output = path.join(outDir, process.platform === 'win32' ? 'lead-enrich.exe' : 'lead-enrich');

fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
// An eval'd worker runs as a CommonJS script.
const worker = await bundle('dist/cli/store-check-worker.js', path.join(work, 'store-check-worker.cjs'), { format: 'cjs', inlineLazy: true });
const main = path.join(work, 'lead-enrich.mjs');
await bundle('dist/cli/cli-process.js', main, { inlineLazy: true, define: { STORE_CHECK_WORKER_SOURCE: JSON.stringify(worker) } });
const config = path.join(work, 'sea-config.json');
// Node hides the deprecation of `new Buffer()` when the call comes from node_modules; in one bundle
// nothing does, and a dependency's old call would print a warning a cron job mails every night.
// The code cache saves a third of the start-up CPU and costs no memory that a run does not use anyway.
const sea = { main, mainFormat: 'module', output, disableExperimentalSEAWarning: true, useCodeCache: true, execArgv: ['--disable-warning=DEP0005'] };
fs.writeFileSync(config, JSON.stringify(sea, null, 2));
execFileSync(process.execPath, ['--build-sea', config], { stdio: 'inherit' });
fs.rmSync(work, { recursive: true, force: true });
console.log(`Built ${path.relative(process.cwd(), output)} (${(fs.statSync(output).size / 1024 / 1024).toFixed(0)} MB)`);

// `npm run build:exe`: one executable file for the platform this runs on, which needs no Node, npm
// or node_modules on the machine that runs it (Node's single-executable applications).
// 1. The CLI (dist/, built by `npm run build` first) and every dependency it loads at run time in
//    one ES module bundle. The modules we load lazily with `createRequire(import.meta.url)(name)`
//    (to keep `--help` fast) are turned into plain `require(name)` calls, which the bundler follows:
//    package.json comes along too, so the version is inlined. Any require the bundler cannot see
//    fails the build, except Bottleneck's own `eval("require")` of its Redis clients, which never
//    runs: the cluster code hands Bottleneck the connection and the Redis class.
// 2. The store check's worker as a bundle of its own, inlined as source text (there is no file
//    beside the executable to start a worker from).
// 3. `node --build-sea`: the bundle injected into a copy of this Node binary.
// Output: exe/lead-enrich (exe/lead-enrich.exe on Windows).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(root, 'exe');
const work = path.join(outDir, 'work');
const output = path.join(outDir, process.platform === 'win32' ? 'lead-enrich.exe' : 'lead-enrich');

/** `createRequire(import.meta.url)(` in our compiled code, as the bundler sees it. */
const LAZY_REQUIRE = /\bcreateRequire\(import\.meta\.url\)\(/g;

const lazyRequires = {
  name: 'lazy-requires',
  transform(code, id) {
    if (!id.startsWith(path.join(root, 'dist')) || !LAZY_REQUIRE.test(code)) return null;
    return { code: code.replace(LAZY_REQUIRE, 'require('), map: null };
  },
};

/** Packages a dependency names and we never make it load: debug's colours (in a try). */
const OPTIONAL = new Set(['supports-color']);

/** Warnings that do not matter here; any other one fails the build. */
function onLog(level, log, handle) {
  const bottleneckEval = log.code === 'EVAL' && /node_modules[\\/]bottleneck[\\/]/.test(log.message);
  const optional = log.code === 'UNRESOLVED_IMPORT' && [...OPTIONAL].some((name) => log.message.includes(`'${name}'`));
  if (level === 'warn' && !bottleneckEval && !optional) handle('error', log);
  else if (level !== 'warn') handle(level, log);
}

async function bundle(input, file, format, define = {}) {
  await build({
    input: path.join(root, input),
    platform: 'node',
    plugins: [lazyRequires],
    transform: { define },
    onLog,
    write: true,
    output: { file, format, codeSplitting: false },
  });
  const code = fs.readFileSync(file, 'utf8');
  const left = code.match(LAZY_REQUIRE);
  if (left) throw new Error(`${file}: ${left.length} lazy require(s) left unbundled`);
  const hidden = [...code.matchAll(/__require\("([^"]+)"\)/g)].map((m) => m[1]).filter((name) => !isBuiltin(name) && !OPTIONAL.has(name));
  if (hidden.length > 0) throw new Error(`${file}: required at run time but not bundled: ${[...new Set(hidden)].join(', ')}`);
  return code;
}

fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(work, { recursive: true });
// An eval'd worker runs as a CommonJS script.
const worker = await bundle('dist/cli/store-check-worker.js', path.join(work, 'store-check-worker.cjs'), 'cjs');
const main = path.join(work, 'lead-enrich.mjs');
await bundle('dist/cli/main.js', main, 'esm', { STORE_CHECK_WORKER_SOURCE: JSON.stringify(worker) });
const config = path.join(work, 'sea-config.json');
// Node hides the deprecation of `new Buffer()` when the call comes from node_modules; in one bundle
// nothing does, and a dependency's old call would print a warning a cron job mails every night.
// The code cache saves a third of the start-up CPU and costs no memory that a run does not use anyway.
const sea = { main, mainFormat: 'module', output, disableExperimentalSEAWarning: true, useCodeCache: true, execArgv: ['--disable-warning=DEP0005'] };
fs.writeFileSync(config, JSON.stringify(sea, null, 2));
execFileSync(process.execPath, ['--build-sea', config], { stdio: 'inherit' });
fs.rmSync(work, { recursive: true, force: true });
console.log(`Built ${path.relative(process.cwd(), output)} (${(fs.statSync(output).size / 1024 / 1024).toFixed(0)} MB)`);

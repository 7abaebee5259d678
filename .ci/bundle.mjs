// The command line and every dependency it imports, in one ES module file.
// `node .ci/bundle.mjs` (the last step of `npm run build`, after the compiler) writes
// dist/cli/bundle.js, which the bin (dist/cli/main.js) starts: Node then resolves and reads one
// file, not about 300, and a short run costs about a third less CPU (docs/development.md, "Where
// the CPU goes"). What the code loads lazily with `createRequire(import.meta.url)(name)` (iconv-lite,
// yauzl, the free-mail list, package.json) stays lazy there: read from beside the bundle when a run
// needs it, as the compiled modules do, so that `--help` does not pay for it. The store check's
// worker stays the compiled file beside the bundle.
// .ci/build-exe.mjs makes its bundle with the same function, with the lazy loads inlined: a single
// executable has nothing beside it to load them from.
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** `createRequire(import.meta.url)(` in our compiled code, as the bundler sees it. */
const LAZY_REQUIRE = /\bcreateRequire\(import\.meta\.url\)\(/g;

/** Turns our lazy loads into plain `require(name)` calls, which the bundler follows. */
const inlineLazyRequires = {
  name: 'inline-lazy-requires',
  transform(code, id) {
    if (!id.startsWith(path.join(root, 'dist')) || !LAZY_REQUIRE.test(code)) return null;
    return { code: code.replace(LAZY_REQUIRE, 'require('), map: null };
  },
};

/** Packages a dependency names and we never make it load: debug's colours (in a try). */
const OPTIONAL = new Set(['supports-color']);

/** Warnings that do not matter here; any other one fails the build. */
function onLog(level, log, handle) {
  // Bottleneck's own `eval("require")` of its Redis clients never runs: the cluster code hands
  // Bottleneck the connection and the Redis class.
  const bottleneckEval = log.code === 'EVAL' && /node_modules[\\/]bottleneck[\\/]/.test(log.message);
  const optional = log.code === 'UNRESOLVED_IMPORT' && [...OPTIONAL].some((name) => log.message.includes(`'${name}'`));
  if (level === 'warn' && !bottleneckEval && !optional) handle('error', log);
  else if (level !== 'warn') handle(level, log);
}

/**
 * Bundles `input` (a path under the root) into `file`. `inlineLazy`: the lazy loads come inside too,
 * and any left fails the build. A require the bundler cannot see fails it either way.
 */
export async function bundle(input, file, { format = 'esm', define = {}, inlineLazy = false } = {}) {
  await build({
    input: path.join(root, input),
    platform: 'node',
    plugins: inlineLazy ? [inlineLazyRequires] : [],
    transform: { define },
    onLog,
    write: true,
    output: { file, format, codeSplitting: false },
  });
  const code = fs.readFileSync(file, 'utf8');
  const left = inlineLazy ? code.match(LAZY_REQUIRE) : null;
  if (left) throw new Error(`${file}: ${left.length} lazy require(s) left unbundled`);
  const hidden = [...code.matchAll(/__require\("([^"]+)"\)/g)].map((m) => m[1]).filter((name) => !isBuiltin(name) && !OPTIONAL.has(name));
  if (hidden.length > 0) throw new Error(`${file}: required at run time but not bundled: ${[...new Set(hidden)].join(', ')}`);
  return code;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundle('dist/cli/cli-process.js', path.join(root, 'dist', 'cli', 'bundle.js'));
}

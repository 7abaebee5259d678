// The command line and every dependency it imports, in one ES module file.
// `node .ci/bundle.mjs` (the last step of `npm run build`, after the compiler) writes
// dist/cli/bundle.js, which the bin (dist/cli/main.js) starts: Node then resolves and reads one
// file, not about 300, and a short run costs about a third less CPU (docs/development.md, "Where
// the CPU goes"). What the code loads lazily with `createRequire(import.meta.url)(name)` (iconv-lite,
// yauzl, the free-mail list, package.json) stays lazy there: read from beside the bundle when a run
// needs it, as the compiled modules do, so that `--help` does not pay for it. The store check's
// worker stays the compiled file beside the bundle. Three plugins below trim what every start
// pays before the command runs (node:http's facade, string-width's and @sindresorhus/is's
// construction at load; --version 0.31 → 0.27 s of CPU, 0.27 → 0.19 with a compile cache;
// test/e2e/start-up.test.ts holds them).
// .ci/build-exe.mjs makes its bundle with the same function, with the lazy loads inlined: a single
// executable has nothing beside it to load them from.
import fs from 'node:fs';
import http from 'node:http';
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

/**
 * node:http read with `process.getBuiltinModule`, not imported: importing a built-in module makes
 * Node build its ES module facade, which reads every export, and node:http's WebSocket, CloseEvent
 * and MessageEvent are getters that load undici and its fetch (15 to 35 ms of every start, even
 * `--version`). The module made here exports node:http as its default and its plain values by name.
 */
const httpByValue = {
  name: 'http-by-value',
  resolveId(id) {
    return id === 'http' || id === 'node:http' ? '\0node-http' : null;
  },
  load(id) {
    if (id !== '\0node-http') return null;
    const plain = Object.entries(Object.getOwnPropertyDescriptors(http))
      .filter(([key, d]) => !d.get && key !== 'default')
      .map(([key]) => `export const ${key} = http.${key};`);
    return ["const http = process.getBuiltinModule('node:http');", 'export default http;', ...plain].join('\n');
  },
};

/**
 * string-width (yargs and cliui, three copies) builds an `Intl.Segmenter` and its regular
 * expressions (Unicode property sets: RGI_Emoji alone tens of ms) when it is loaded, which is at
 * every start, though only help and usage text measure a width. Its module is imports, then
 * declarations, then `export default function stringWidth`: that body moves into a function run at
 * the first call. Another shape fails the build rather than bundle it unchanged.
 */
const lazyStringWidth = {
  name: 'lazy-string-width',
  transform(code, id) {
    if (!/[\\/]node_modules[\\/]string-width[\\/]index\.js$/.test(id)) return null;
    const body = code.split('\n');
    const imports = body.filter((line) => line.startsWith('import '));
    const rest = body.filter((line) => !line.startsWith('import '));
    const exported = rest.filter((line) => line.startsWith('export '));
    if (exported.length !== 1 || !exported[0].startsWith('export default function stringWidth('))
      throw new Error(`${id}: not the shape lazy-string-width expects (imports, declarations, one default stringWidth)`);
    const inner = rest.map((line) => (line.startsWith('export default function') ? line.slice('export default '.length) : line));
    return {
      code: [
        ...imports,
        'let made;',
        'export default function stringWidth(...args) {',
        '\treturn (made ??= make())(...args);',
        '}',
        'function make() {',
        ...inner,
        'return stringWidth;',
        '}',
      ].join('\n'),
      map: null,
    };
  },
};

/**
 * @sindresorhus/is (got's) builds two `Intl.ListFormat`s when it is loaded, about 15 ms of every
 * start (Node loads ICU's list data for them), for messages about values of a wrong type. Each is
 * built at its first use instead; a module without them fails the build rather than bundle unchanged.
 */
const LIST_FORMAT = /^const (\w+) = (new Intl\.ListFormat\([^;\n]*\));$/gm;
const lazyListFormat = {
  name: 'lazy-list-format',
  transform(code, id) {
    if (!/[\\/]node_modules[\\/]@sindresorhus[\\/]is[\\/]distribution[\\/]index\.js$/.test(id)) return null;
    const made = code.replace(
      LIST_FORMAT,
      (_, name, make) => `let ${name}Made;\nconst ${name} = { format: (list) => (${name}Made ??= ${make}).format(list) };`,
    );
    if (made === code || /^const \w+ = new Intl\./m.test(made)) throw new Error(`${id}: not the shape lazy-list-format expects`);
    return { code: made, map: null };
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
    plugins: [httpByValue, lazyStringWidth, lazyListFormat, ...(inlineLazy ? [inlineLazyRequires] : [])],
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

// The shape of src/ (docs/architecture.md): every folder imports only folders below it,
// no two files import each other in a circle, src/api imports nothing outside itself and the store
// nothing of the writer. Read from the sources, as ../shared/tools/layers.cjs reads them.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';

/** Bottom to top. */
const LAYERS = ['api', 'core', 'options', 'store', 'read', 'plan', 'cluster', 'lookup', 'write', 'report', 'run', 'index.ts', 'cli'];
/**
 * The sandbox stands apart: it speaks the interface (api's wire types only) and reads its options
 * by the options' rules (options/); the CLI starts it, and programs through its own entry,
 * src/sandbox/index.ts (`lead-enrich/sandbox`).
 */
const APART: Record<string, { uses: string[]; usedBy: string[] }> = { sandbox: { uses: ['api', 'options'], usedBy: ['cli'] } };

const SRC = path.join(REPO_ROOT, 'src');
const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'";]*?from\s*['"](\.[^'"]*)['"]|import\s*\(\s*['"](\.[^'"]*)['"]\s*\)/gm;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sources(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

function importsOf(file: string): string[] {
  const text = fs
    .readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  return [...text.matchAll(IMPORT)].map((m) => path.resolve(path.dirname(file), m[1] ?? m[2]!).replace(/\.js$/, '.ts'));
}

const folderOf = (file: string) => path.relative(SRC, file).split(path.sep)[0]!;
const files = sources(SRC);
const edges = new Map(files.map((file) => [file, importsOf(file).filter((target) => target.startsWith(SRC))]));

describe('the layers of src/', () => {
  it('every folder imports only folders below it', () => {
    const wrong: string[] = [];
    for (const [file, targets] of edges) {
      const from = folderOf(file);
      for (const target of targets) {
        const to = folderOf(target);
        if (to === from) continue;
        const allowed = APART[from]
          ? APART[from].uses.includes(to)
          : APART[to]
            ? APART[to].usedBy.includes(from)
            : LAYERS.indexOf(to) >= 0 && LAYERS.indexOf(to) < LAYERS.indexOf(from);
        if (!allowed) wrong.push(`${path.relative(SRC, file)} → ${path.relative(SRC, target)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('no import circle between files', () => {
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, trail: string[]): void => {
      state.set(file, 'open');
      for (const target of edges.get(file) ?? []) {
        if (state.get(target) === 'open') circles.push([...trail.slice(trail.indexOf(target)), target].map((f) => path.relative(SRC, f)).join(' → '));
        else if (!state.has(target)) visit(target, [...trail, target]);
      }
      state.set(file, 'done');
    };
    for (const file of files) if (!state.has(file)) visit(file, [file]);
    expect(circles).toEqual([]);
  });

  it('the sandbox takes only types from api, and the error classes (its refusals are LeadErrors)', () => {
    const VALUE_IMPORT = /^\s*import\s+(?!type\b)[^'";]*?from\s*['"]\.\.\/api\/([^'"]+)['"]/gm;
    const wrong = files
      .filter((file) => folderOf(file) === 'sandbox')
      .flatMap((file) => [...fs.readFileSync(file, 'utf8').matchAll(VALUE_IMPORT)].map((m) => `${path.relative(SRC, file)} → api/${m[1]}`))
      .filter((edge) => !edge.endsWith('api/errors.js'));
    expect(wrong).toEqual([]);
  });

  it('knows every folder of src/', () => {
    const folders = new Set(files.map(folderOf));
    for (const folder of folders) expect([...LAYERS, ...Object.keys(APART)]).toContain(folder);
  });
});

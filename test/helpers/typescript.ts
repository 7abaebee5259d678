// A user's TypeScript project, compiled with `tsc --strict` against the BUILT package (`npm run
// build` first): 'lead-enrich' resolves from node_modules through the package's `exports`, as in
// a user's project. For the tests that hold the library's types to what the docs promise.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './cli.js';
import { makeTempDir } from './temp-dirs.js';

export interface TypeScriptProject {
  /** The errors `tsc --strict` reports for `code` (a module importing 'lead-enrich'), one line each: `file:line TSnnnn: message`. */
  compile(code: string): string[];
  /** The same for several modules at once (one program: the package's types are read once), by name. */
  compileAll<K extends string>(modules: Record<K, string>): Record<K, string[]>;
}

/** A project in a folder of its own, removed when the test file ends. */
export function typeScriptProject(): TypeScriptProject {
  const dir = makeTempDir('lead-enrich-types-');
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(REPO_ROOT, path.join(dir, 'node_modules', 'lead-enrich'), 'dir');
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const compileAll = <K extends string>(modules: Record<K, string>): Record<K, string[]> => {
    const files = Object.entries<string>(modules).map(([name, code]) => {
      const file = path.join(dir, `${name}.ts`);
      fs.writeFileSync(file, code);
      return file;
    });
    const program = ts.createProgram(files, {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
      typeRoots: [path.join(REPO_ROOT, 'node_modules', '@types')],
      // The package's own declarations are checked whole by the package test; here only the code.
      skipLibCheck: true,
    });
    const errors = Object.fromEntries(Object.keys(modules).map((name) => [name, [] as string[]])) as Record<K, string[]>;
    for (const d of ts.getPreEmitDiagnostics(program)) {
      const name = d.file ? (path.basename(d.file.fileName, '.ts') as K) : undefined;
      const where = d.file && d.start !== undefined ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
      const line = `${where} TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      // A diagnostic of no module of ours (the options, a declaration) is every module's.
      for (const target of name !== undefined && name in errors ? [name] : (Object.keys(errors) as K[])) errors[target].push(line);
    }
    return errors;
  };
  return { compileAll, compile: (code) => compileAll({ example: code }).example };
}

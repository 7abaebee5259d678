// The library's TypeScript example of enrichRows (docs/library.md) compiles under --strict against the built types,
// as a user's project resolves them: 'lead-enrich' from node_modules through the package's
// `exports`. The same example with a mistake a user could make must not compile: the check can fail.
// Needs the build (`npm run build`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import { allCodeBlocks } from '../helpers/docs.js';

function typescriptExample(): string {
  const blocks = allCodeBlocks('ts').filter((block) => block.code.includes('enrichRows('));
  expect(blocks.map((block) => block.file)).toEqual(['docs/library.md']);
  return blocks[0]!.code;
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lead-enrich-types-'));
  fs.mkdirSync(path.join(dir, 'node_modules'));
  fs.symlinkSync(REPO_ROOT, path.join(dir, 'node_modules', 'lead-enrich'), 'dir');
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The errors `tsc --strict` reports for `code`, one line each. */
function compile(code: string): string[] {
  const file = path.join(dir, 'example.ts');
  fs.writeFileSync(file, code);
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: ['node'],
    typeRoots: [path.join(REPO_ROOT, 'node_modules', '@types')],
    // The package's own declarations are checked whole by the package test; here only the example.
    skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '';
    return `${where} TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

describe('the README TypeScript example of enrichRows', () => {
  it('compiles under --strict: an interface row type, input typed as the caller\'s rows, lead present when found', () => {
    expect(compile(typescriptExample())).toEqual([]);
  }, 60_000);

  it('does not compile when it reads lead without asking whether the row was found, or a field its rows lack', () => {
    const code = typescriptExample().replace(
      "if (result.status === 'found') {",
      "console.log(result.lead.name, result.input.phone);\n  if (result.status === 'found') {",
    );
    const errors = compile(code);
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatch(/TS18048: 'result\.lead' is possibly 'undefined'/);
    expect(errors[1]).toMatch(/TS2339: Property 'phone' does not exist on type 'Contact'/);
  }, 60_000);
});

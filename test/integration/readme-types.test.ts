// The library's TypeScript example of enrichRows (docs/library.md) compiles under --strict against the built types,
// as a user's project resolves them: 'lead-enrich' from node_modules through the package's
// `exports`. The same example with a mistake a user could make must not compile: the check can fail.
// Needs the build (`npm run build`).
import { describe, expect, it } from 'vitest';
import { allCodeBlocks } from '../helpers/docs.js';
import { typeScriptProject } from '../helpers/typescript.js';

function typescriptExample(): string {
  const blocks = allCodeBlocks('ts').filter((block) => block.code.includes('enrichRows('));
  expect(blocks.map((block) => block.file)).toEqual(['docs/library.md']);
  return blocks[0]!.code;
}

const project = typeScriptProject();
const compile = (code: string) => project.compile(code);

describe('the README TypeScript example of enrichRows', () => {
  it("compiles under --strict: an interface row type, input typed as the caller's rows, lead present when found", () => {
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

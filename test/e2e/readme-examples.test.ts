// The library's examples are runnable: every ```js block of the README and of docs/ is run as a module (with
// 'lead-enrich' and 'lead-enrich/sandbox' resolved to the built package) against the sandbox, in a folder holding the demo
// contacts.csv, and must exit 0 and print something. An example that drifts from the API fails here.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { allCodeBlocks, codeBlocks, section } from '../helpers/docs.js';
import { hangBound, run } from '../helpers/processes.js';

function libraryExamples(): string[] {
  return allCodeBlocks('js').map((block) => block.code);
}

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, rpm: 60_000 });
});
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  return sandbox.close();
});

describe('README Library examples', () => {
  const examples = libraryExamples();
  it('has runnable examples, those of the library page among them', () => {
    expect(examples.length).toBeGreaterThanOrEqual(3);
    expect(codeBlocks(section('docs/library.md', 'Library'), 'js').length).toBeGreaterThanOrEqual(3);
  });

  it.each(examples.map((code, i) => [i + 1, code] as const))(
    'example %i runs against the sandbox',
    async (_n, code) => {
      const dir = tempDir();
      dirs.push(dir);
      fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'contacts.csv'), path.join(dir, 'contacts.csv'));
      const entry = pathToFileURL(path.join(REPO_ROOT, 'dist', 'index.js')).href;
      const sandboxEntry = pathToFileURL(path.join(REPO_ROOT, 'dist', 'sandbox', 'index.js')).href;
      const file = path.join(dir, 'example.mjs');
      fs.writeFileSync(file, code.replace(/from 'lead-enrich'/g, `from '${entry}'`).replace(/from 'lead-enrich\/sandbox'/g, `from '${sandboxEntry}'`));
      const env = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        LEAD_API_BASE_URL: sandbox.baseUrl,
        LEAD_API_TOKEN: sandbox.token,
        LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite'),
      };
      const { code: status, stdout, stderr } = await run(process.execPath, [file], { cwd: dir, env, stdin: 'ignore', timeoutMs: 20_000 });
      expect(status, stderr).toBe(0);
      expect(stdout.trim().length, stderr).toBeGreaterThan(0);
    },
    hangBound(30_000),
  );
});

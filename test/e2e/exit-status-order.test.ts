// One order of the exit statuses wherever they are listed: `enrich --help`, the README's
// first run, docs/reference.md and docs/cli-contract.md (in step with the shared contract), so
// that a reader who compares two of them finds the same list: 0, 2, 5, 3, 4, 1, 130.
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { section } from '../helpers/docs.js';

const ORDER = [0, 2, 5, 3, 4, 1, 130];

/** The statuses of a markdown table whose rows start with `| N |`, in order. */
const tableStatuses = (text: string) => [...text.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));

describe('the exit statuses, listed in one order', () => {
  it('in docs/reference.md and docs/cli-contract.md', () => {
    expect(tableStatuses(section('docs/reference.md', 'Exit statuses'))).toEqual(ORDER);
    expect(tableStatuses(section('docs/cli-contract.md', 'Exit status of `enrich`'))).toEqual(ORDER);
  });

  it("in the README's first run", () => {
    const sentence = /The\s+exit status says how it went: ([\s\S]*?)\(\[exit statuses\]/.exec(section('README.md', 'The first run'))![1]!;
    expect([...sentence.matchAll(/(?:^|, )(\d+) /g)].map((m) => Number(m[1]))).toEqual(ORDER);
  });

  it('in enrich --help', async () => {
    const r = await runCli(['enrich', '--help']);
    const listed = r.stdout.slice(r.stdout.indexOf('Exit statuses:'));
    expect([...listed.matchAll(/^ {2}(\d+) /gm)].map((m) => Number(m[1]))).toEqual(ORDER);
  });
});

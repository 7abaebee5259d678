// No line lead-enrich writes starts a CI runner's workflow command unless lead-enrich means it
// (core/log-lines.ts; docs/cli-contract.md, "In a CI step"): `::` at a line's start, after white
// space too, and `##[` anywhere are written escaped, as JSON's own escapes, so that JSON stays JSON.
import { describe, expect, it } from 'vitest';
import { logText } from '../../src/core/log-lines.js';
import { commandLines } from '../helpers/ci-files.js';

describe('logText: nothing from the data becomes a workflow command', () => {
  it.each([
    ['::error::z', '\\u003a:error::z'],
    ['  \t::warning file=a::y', '  \t\\u003a:warning file=a::y'],
    ['\u00a0\u3000::add-mask::x', '\u00a0\u3000\\u003a:add-mask::x'],
    ['##[error]boom', '#\\u0023[error]boom'],
    ["lead-enrich: column '##[set-env name=X;]1' not found", "lead-enrich: column '#\\u0023[set-env name=X;]1' not found"],
    ['###[x', '##\\u0023[x'],
    ['ok\n::error::z\n  ::x\n##[y', 'ok\n\\u003a:error::z\n  \\u003a:x\n#\\u0023[y'],
  ])('%j is written %j, which no runner reads as a command', (text, written) => {
    expect(logText(text)).toBe(written);
    expect(commandLines(logText(text))).toEqual([]);
  });

  it('leaves text holding neither as it is: a colon pair inside a line, a single # or colon', () => {
    for (const text of ['lead-enrich: 12:30 ok', 'a::b', '# heading [x]', ': one', '2026-12-01T00:00:00.000Z ::error::x']) expect(logText(text)).toBe(text);
  });

  it('a JSON text passing through stays JSON, the same value once parsed', () => {
    const value = { column: '##[error]x', lines: ['::error::z', '\n::warning::y'], file: '::error::x,line=9.csv' };
    for (const json of [JSON.stringify(value), JSON.stringify(value, null, 2)]) {
      const written = logText(json);
      expect(commandLines(written)).toEqual([]);
      expect(JSON.parse(written)).toEqual(value);
    }
  });
});

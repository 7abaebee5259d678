// The CLI's own heap tuning: which enrich runs get it. Its effect on memory is measured
// by the memory benchmark (bench/scenarios/memory.js), not here: V8 flags cannot be read back.
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TUNE_FROM_BYTES, wantsHeapTuning } from '../../src/cli/heap-tuning.js';
import { makeTempDir } from '../helpers/files.js';

describe('heap tuning', () => {
  it('is for inputs of at least TUNE_FROM_BYTES and for stdin or a stream, not for small or missing files', () => {
    const dir = makeTempDir();
    const big = path.join(dir, 'big.csv');
    const small = path.join(dir, 'small.csv');
    fs.writeFileSync(big, Buffer.alloc(TUNE_FROM_BYTES, 'a'));
    fs.writeFileSync(small, Buffer.alloc(TUNE_FROM_BYTES - 1, 'a'));
    expect(wantsHeapTuning(big)).toBe(true);
    expect(wantsHeapTuning(small)).toBe(false);
    expect(wantsHeapTuning('-')).toBe(true);
    expect(wantsHeapTuning(Readable.from(['email\n']))).toBe(true);
    expect(wantsHeapTuning(path.join(dir, 'missing.csv'))).toBe(false);
  });
});

// The cause a request's error keeps (src/api/transport.ts, safeCause): a copy of got's error with its
// name, message, code and stack, and of its own causes three deep, never its request options, which
// hold the Authorization header (util.inspect, console.error or a logger walking `cause` would
// print the token).
import util from 'node:util';
import { describe, expect, it } from 'vitest';
import { safeCause } from '../../src/api/transport.js';

const TOKEN = 'tok-safe-cause-0123456789';

/** An error as got makes it: its options hold the token; `depth` causes under it. */
function gotError(depth: number): Error {
  let cause: Error | undefined;
  for (let i = depth; i >= 1; i -= 1) cause = Object.assign(new Error(`cause ${i}`, cause ? { cause } : undefined), { code: `E${i}` });
  const error = new Error('connect ECONNREFUSED 127.0.0.1:9', cause ? { cause } : undefined) as Error & { code: string; options: unknown };
  error.name = 'RequestError';
  error.code = 'ECONNREFUSED';
  error.options = { headers: { authorization: `Bearer ${TOKEN}` } };
  return error;
}

function chain(error: unknown): string[] {
  const names: string[] = [];
  for (let e = error as { message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) names.push(String(e.message));
  return names;
}

describe("a request's error, as its cause", () => {
  it('keeps name, message, code and stack, and nothing of the request: no token wherever it is looked at', () => {
    const error = gotError(1);
    const copy = safeCause(error) as Error & { code?: string };
    expect({ name: copy.name, message: copy.message, code: copy.code, stack: copy.stack }).toEqual({
      name: 'RequestError',
      message: 'connect ECONNREFUSED 127.0.0.1:9',
      code: 'ECONNREFUSED',
      stack: error.stack,
    });
    expect(Object.keys(copy)).not.toContain('options');
    expect(util.inspect(copy, { depth: 10 })).not.toContain(TOKEN);
    expect((copy.cause as Error & { code?: string }).code).toBe('E1');
  });

  it('walks three causes under it and no more', () => {
    expect(chain(safeCause(gotError(3)))).toEqual(['connect ECONNREFUSED 127.0.0.1:9', 'cause 1', 'cause 2', 'cause 3']);
    expect(chain(safeCause(gotError(6)))).toEqual(['connect ECONNREFUSED 127.0.0.1:9', 'cause 1', 'cause 2', 'cause 3']);
  });

  it('no cause where there is none, or where it is null', () => {
    expect('cause' in safeCause(gotError(0))).toBe(false);
    expect('cause' in safeCause(Object.assign(new Error('x'), { cause: null }))).toBe(false);
  });

  it('a code that is not a string, a name or stack that is not one: left out; a thrown value that is no error: its text', () => {
    const odd = Object.assign(new Error('odd'), { code: -111, name: 42, stack: undefined });
    const copy = safeCause(odd) as Error & { code?: unknown };
    expect(copy.code).toBeUndefined();
    expect(copy.name).toBe('Error');
    expect(copy.stack).toMatch(/^Error: odd\n/);
    expect(safeCause('socket hang up').message).toBe('socket hang up');
    expect(safeCause(undefined).message).toBe('undefined');
  });
});

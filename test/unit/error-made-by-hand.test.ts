// The error classes as a program makes them itself (src/api/errors.ts is public: a caller's own
// wrapper, or a test double of the client, raises them): what a constructor given only a message
// holds.
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../src/api/errors.js';

describe('an error made with only its message', () => {
  it('a BadRequestError has no reasons, its code and no status', () => {
    const error = new BadRequestError('The API rejected the input');
    expect(error.reasons).toEqual([]);
    expect(error.code).toBe('bad_request');
    expect(error.status).toBeUndefined();
  });
});

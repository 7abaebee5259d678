// The error classes as a program makes them itself (src/api/errors.ts is public: a caller's own
// wrapper, or a test double of the client, raises them): what a constructor given only a message
// holds.
import { describe, expect, it } from 'vitest';
import { BadRequestError, CoordinationLostError } from '../../src/api/errors.js';

describe('an error made with only its message', () => {
  it('a BadRequestError has no reasons, its code and no status', () => {
    const error = new BadRequestError('The API rejected the input');
    expect(error.reasons).toEqual([]);
    expect(error.code).toBe('bad_request');
    expect(error.status).toBeUndefined();
  });
});

describe('the connection to Redis lost', () => {
  it('keeps what it was lost to as its cause, and has none when not told', () => {
    const cause = new Error('read ECONNRESET');
    expect(new CoordinationLostError('Lost the connection to Redis', cause).cause).toBe(cause);
    expect(new CoordinationLostError('Lost the connection to Redis').cause).toBeUndefined();
    expect(new CoordinationLostError('Lost the connection to Redis').code).toBe('redis_unavailable');
  });
});

// The token as users paste it (api/transport.ts): with or without `Bearer ` or `Bearer:` in front,
// any case, the header adds the scheme itself; a token that cannot be sent in an HTTP header
// (empty, with a space, a control character or a character outside Latin-1) is one configuration
// error at once, never quoted, instead of a network error on every row. No request is made: the
// token's fingerprint (a SHA-256 of it, what Redis keys are named by) shows what is kept.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { speakingTo } from '../../src/api/caller-words.js';
import { ConfigError } from '../../src/api/errors.js';
import { Transport } from '../../src/api/transport.js';

const BASE = 'https://api.example.com/v2';
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function kept(token: string): string {
  const transport = new Transport({ baseUrl: BASE, token });
  try {
    return transport.tokenFingerprint();
  } finally {
    transport.close();
  }
}

describe('the token as pasted', () => {
  it.each(['tok123', 'Bearer tok123', 'bearer tok123', 'BEARER   tok123', 'Bearer:tok123', 'Bearer:  tok123', '  Bearer tok123'])(
    '%j is sent as tok123',
    (token) => {
      expect(kept(token)).toBe(sha('tok123'));
    },
  );

  it('a scheme word inside the token is the token', () => {
    expect(kept('tokBearer')).toBe(sha('tokBearer'));
    expect(kept('Bearertok')).toBe(sha('Bearertok'));
    // Only a leading scheme word, followed by a space or a colon, is taken off.
    expect(kept('tok-bearer:123')).toBe(sha('tok-bearer:123'));
    expect(kept('bearerish:tok123')).toBe(sha('bearerish:tok123'));
  });

  it('Latin-1 letters are sent as they are', () => {
    expect(kept('tok\u00e9')).toBe(sha('tok\u00e9'));
  });
});

describe('a token that cannot be sent', () => {
  it.each(['', '   ', 'Bearer ', 'tok 123', 'tok\t123', undefined])('%j: no usable token', (token) => {
    const make = () => new Transport({ baseUrl: BASE, token: token as string });
    expect(make).toThrow(ConfigError);
    expect(make).toThrow(/^No usable API token: /);
  });

  it.each(['tok\u0001', 'tok\u007f', 'tok\u20ac'])('%j: a character no HTTP header carries, the token not quoted', (token) => {
    const make = () => new Transport({ baseUrl: BASE, token });
    expect(make).toThrow(ConfigError);
    expect(make).toThrow(/^Invalid API token: it contains a control character or a character outside Latin-1, which cannot be sent in an HTTP header; check /);
    try {
      make();
    } catch (error) {
      expect((error as Error).message).not.toContain(token);
    }
  });

  it('said to each reader in its own words: where the command line and a program give the token', () => {
    const make = () => new Transport({ baseUrl: BASE, token: '' });
    expect(() => speakingTo('cli', make)).toThrow(/^No usable API token: set LEAD_API_TOKEN, or token \/ tokenFile in the config file$/);
    expect(() => speakingTo('library', make)).toThrow(/^No usable API token: give the token option$/);
  });

  it('no base URL: said before the token', () => {
    expect(() => new Transport({ baseUrl: '', token: '' })).toThrow(/^No API base URL: give .* \(the service's address, ending in \/v2\)$/);
  });
});

// A proxy's password never shows in a request's error (src/api/transport.ts, withoutSecret): some
// Node releases wrote the proxy's whole URL, password included, in a refused tunnel's message. The
// releases CI runs no longer do (test/integration/request-failures.test.ts sees none), so the
// masking is checked here on errors that hold it, as those releases made them.
import { describe, expect, it } from 'vitest';
import { withoutSecret } from '../../src/api/transport.js';

const TYPED = 'Pa%40ss-w0rd';
const DECODED = 'Pa@ss-w0rd';

function tunnelError(url: string): Error {
  const inner = new Error(`Failed to establish tunnel to api.lead.test:443 via ${url}: HTTP/1.1 407`);
  inner.stack = `Error: ${inner.message}\n    at ClientRequest (node:_http_client:1:1)`;
  const outer = new Error(inner.message, { cause: inner });
  outer.stack = `RequestError: ${inner.message}\n    at got (request.js:1:1)`;
  return outer;
}

describe("a proxy's password out of a request's error", () => {
  it('as typed: masked in the message and stack of the error and of its cause', () => {
    const error = withoutSecret(tunnelError(`http://corp-user:${TYPED}@127.0.0.1:3128/`), TYPED);
    const cause = error.cause as Error;
    for (const text of [error.message, error.stack, cause.message, cause.stack]) {
      expect(text).toContain('via http://corp-user:***@127.0.0.1:3128/');
      expect(text).not.toContain(TYPED);
    }
  });

  it('as decoded: masked too', () => {
    const error = withoutSecret(tunnelError(`http://corp-user:${DECODED}@127.0.0.1:3128/`), TYPED);
    expect(error.message).toBe('Failed to establish tunnel to api.lead.test:443 via http://corp-user:***@127.0.0.1:3128/: HTTP/1.1 407');
    expect((error.cause as Error).stack).not.toContain(DECODED);
  });

  it('only where it stands as a password (between the colon and the @): the same word elsewhere stays', () => {
    const error = withoutSecret(new Error('user s3cret at http://u:s3cret@proxy:3128'), 's3cret');
    expect(error.message).toBe('user s3cret at http://u:***@proxy:3128');
  });

  it('an error without a stack keeps none', () => {
    const error = new Error('via http://u:s3cret@proxy:3128');
    error.stack = undefined;
    expect(withoutSecret(error, 's3cret').stack).toBeUndefined();
  });

  it('no password: the error as it was', () => {
    const error = tunnelError('http://corp-user:@127.0.0.1:3128/');
    const before = error.message;
    expect(withoutSecret(error, undefined)).toBe(error);
    expect(withoutSecret(error, '').message).toBe(before);
  });
});

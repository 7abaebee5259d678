// Sandboxes for a test file: each test starts what it needs, and every one is closed after the
// test (registered with vitest's afterEach by the file that calls this, at load time).
import { afterEach } from 'vitest';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';

/** A starter of sandboxes on 127.0.0.1 port 0 with these defaults, closed after each test. */
export function sandboxesPerTest(defaults: SandboxOptions = {}): (options?: SandboxOptions) => Promise<Sandbox> {
  const open: Sandbox[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  return async (options = {}) => {
    const s = await startSandbox({ port: 0, rpm: 60_000, ...defaults, ...options });
    open.push(s);
    return s;
  };
}

// A real redis-server on 127.0.0.1 for the tests of --redis (no mock). Where none is installed the
// tests that need it are skipped with REDIS_MISSING as their reason, so that `npm test` needs only
// Node and npm; `.ci/run` installs Debian's redis-server, so CI runs them.
import type { ChildProcess } from 'node:child_process';
import net from 'node:net';
import { runSync, start } from './processes.js';

export interface RedisServer {
  url: string;
  port: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Why the --redis tests cannot run here, or undefined when redis-server is on PATH. */
export const REDIS_MISSING: string | undefined =
  runSync('redis-server', ['--version']).error === undefined ? undefined : 'no redis-server on PATH (Debian: redis-server)';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  // Killed with the test (or, started in a beforeAll, the test file) that started it, if not stopped before.
  const child = start('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdin: 'ignore',
    timeoutMs: Infinity,
  });
  const output = (): string => child.output.stdout;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start on port ${port}:\n${output()}`)), 10_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`Cannot run redis-server (${error.message}): install it (Debian: apt-get install redis-server)`));
    });
    child.stdout!.on('data', () => {
      if (/Ready to accept connections/.test(output())) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

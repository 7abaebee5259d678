// The environment that gives the CLI's process the host names the test answers itself
// (test/helpers/test-dns.mjs): `lead-api.invalid` does not exist (ENOTFOUND), `eai-again.invalid`
// cannot be looked up now (EAI_AGAIN), at once and with no DNS query. Given to runCli's env;
// `log`: a file that lists every name the process asked for, one a line (the tries it made).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './cli.js';

export function testDnsEnv(log?: string): Record<string, string> {
  return { NODE_OPTIONS: `--import=${pathToFileURL(path.join(REPO_ROOT, 'test', 'helpers', 'test-dns.mjs')).href}`, ...(log ? { TEST_DNS_LOG: log } : {}) };
}

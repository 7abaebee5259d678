// Turns the shared flags (--config, --base-url, --sandbox, --request-timeout) into a ready
// client: the real service, or an embedded sandbox started in-process on 127.0.0.1.
import type { Argv } from 'yargs';
import type { LeadClient } from '../lookup/lead-client.js';
import { asTyped } from './number-flags.js';
import { requireTarget, resolveConfig, type ResolvedConfig } from '../options/config-file.js';
import type { Sandbox } from '../sandbox/server.js';
import { readOption } from '../options/option-table.js';
import { defaultStorePath, sandboxStorePath } from '../store/default-path.js';

export interface TargetArgs {
  config?: string | undefined;
  baseUrl?: string | undefined;
  sandbox?: boolean | undefined;
  /** As typed (a string from the command line); validated in openTarget. */
  requestTimeout?: number | string | undefined;
}

export function targetOptions<T>(yargs: Argv<T>) {
  return yargs
    .option('config', { type: 'string', describe: 'JSON config file (see config.example.json)', requiresArg: true })
    .option('base-url', { type: 'string', describe: 'API base URL ending in /v2 (env LEAD_API_BASE_URL)', requiresArg: true })
    .option('sandbox', {
      type: 'boolean',
      describe: 'Start the embedded sandbox server and run against it (its answers are stored in results.sandbox.sqlite beside the default store, never in it)',
    })
    // A string, not yargs' number: 'abc' would become NaN and reach got as a timeout (a
    // misleading "Network failure"); positiveInteger below names the option and shows 'abc'.
    .option('request-timeout', { type: 'number', describe: 'Per-request timeout in ms (default 30000)', requiresArg: true });
}

export interface Target {
  client: LeadClient;
  config: ResolvedConfig;
  /** Identifies which server answers, so stored results of different services never mix. */
  service: string;
  sandbox: Sandbox | undefined;
  /**
   * The result store: `flag` (--store); else against the sandbox LEAD_ENRICH_STORE or the
   * sandbox's own store (default-path.ts), never the config file's, which is the service's;
   * else the config file's `store`, LEAD_ENRICH_STORE or the default store, as before.
   */
  storePath(flag: string | undefined): string;
  close(): Promise<void>;
}

export async function openTarget(args: TargetArgs, warn: (line: string) => void): Promise<Target> {
  const requestTimeout = readOption('timeoutMs', asTyped('request-timeout', args.requestTimeout), 'flag');
  const config = resolveConfig({ configPath: args.config, baseUrlFlag: args.baseUrl, warn });
  const timeoutMs = requestTimeout ?? config.file.timeoutMs;
  let sandbox: Sandbox | undefined;
  let baseUrl: string;
  let token: string;
  // Imported here, not above: the client (got) and the sandbox are not needed to print --help.
  const { LeadClient } = await import('../lookup/lead-client.js');
  if (args.sandbox) {
    const { startSandbox } = await import('../sandbox/server.js');
    sandbox = await startSandbox({ host: '127.0.0.1', port: 0 });
    ({ baseUrl, token } = sandbox);
  } else {
    ({ baseUrl, token } = requireTarget(config));
  }
  let client: LeadClient;
  try {
    // Single attempts: `enrich` has its own retry and gate, and a one-off command shows the
    // server's answer, failure included, at once.
    // The sandbox is on 127.0.0.1 in this process: never through a proxy.
    const proxy = args.sandbox ? undefined : config.file.proxy;
    client = new LeadClient({ baseUrl, token, retry: false, ...(timeoutMs === undefined ? {} : { timeoutMs }), ...(proxy === undefined ? {} : { proxy }) });
  } catch (error) {
    await sandbox?.close();
    throw error;
  }
  return {
    client,
    config,
    service: sandbox ? 'sandbox' : client.baseUrl,
    sandbox,
    storePath: (flag) => flag ?? (sandbox ? sandboxStorePath() : (config.file.store ?? defaultStorePath())),
    async close() {
      await client.close();
      await sandbox?.close();
    },
  };
}

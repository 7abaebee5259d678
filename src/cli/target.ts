// Turns the shared flags (--config, --base-url, --sandbox, --request-timeout) into a ready
// client: the real service, or an embedded sandbox started in-process on 127.0.0.1.
import type { Argv } from 'yargs';
import type { LeadClient } from '../lookup/lead-client.js';
import { asTyped } from './number-flags.js';
import { requireTarget, resolveConfig, type ResolvedConfig } from '../options/config-file.js';
import type { Sandbox } from '../sandbox/server.js';
import { readGiven } from '../options/precedence.js';
import type { FlagArgs, OptionName } from '../options/registry.js';
import { defaultStorePath, sandboxStorePath } from '../store/default-path.js';
import { flagOptions } from './flag-options.js';

/** The flags every command that talks to the API has. */
export const TARGET_FLAGS: readonly OptionName[] = ['config', 'baseUrl', 'sandbox', 'timeoutMs'];
export type TargetArgs = Pick<FlagArgs, 'config' | 'baseUrl' | 'sandbox' | 'requestTimeout'>;

export function targetOptions<T>(yargs: Argv<T>): Argv<T & TargetArgs> {
  return flagOptions(yargs, TARGET_FLAGS) as Argv<T & TargetArgs>;
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
   * else LEAD_ENRICH_STORE, the config file's `store` or the default store (options/precedence.ts).
   */
  storePath(flag: string | undefined): string;
  close(): Promise<void>;
}

export async function openTarget(args: TargetArgs, warn: (line: string) => void): Promise<Target> {
  const config = resolveConfig({ configPath: args.config, baseUrlFlag: args.baseUrl, warn });
  const fromConfig = { file: config.file, fileDoor: config.fileDoor };
  const timeoutMs = readGiven('timeoutMs', { flag: asTyped('request-timeout', args.requestTimeout), ...fromConfig });
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
    const proxy = args.sandbox ? undefined : readGiven('proxy', fromConfig);
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
    storePath: (flag) => flag ?? (sandbox ? sandboxStorePath() : (readGiven('store', fromConfig) ?? defaultStorePath())),
    async close() {
      await client.close();
      await sandbox?.close();
    },
  };
}

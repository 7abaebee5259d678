// Configuration from three sources, in precedence order: flags, then environment, then the
// --config JSON file (docs/cli-contract.md, "Credentials and target"). Every value is validated here,
// in one place, with messages that name the key, the rule and what was got.
// There is deliberately no flag for the token itself: it would show in `ps` and shell history.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../api/errors.js';
import { processEnv } from '../api/environment.js';
import { readGiven } from './precedence.js';
import { didYouMean } from './did-you-mean.js';
import { readableWarning, readPrivateFile } from './private-file.js';
import { readOption } from './option-table.js';
import type { Door } from './refusal.js';
import { CONFIG_KEYS, OPTIONS, type OptionName, type RuledName } from './registry.js';

/**
 * The config file's values as written (JSON), each checked by its option's rule as the file is
 * read, so that every command refuses a bad file at once; whoever uses a value reads it by that
 * rule, naming the file (`configDoor`).
 */
export type FileConfig = { [K in OptionName]?: unknown };

export interface ConfigSources {
  /** Path given with --config. */
  configPath?: string | undefined;
  /** --base-url */
  baseUrlFlag?: string | undefined;
  env?: NodeJS.ProcessEnv;
  warn?: (line: string) => void;
}

export interface ResolvedConfig {
  file: FileConfig;
  /** How a value of `file` is named in a message: the file's path as given. */
  fileDoor: Door;
  baseUrl: string | undefined;
  token: string | undefined;
  /** Where the token came from, for messages (never the token itself). */
  tokenSource: string | undefined;
  /** The files the configuration is read from (the config file, its tokenFile): no output may replace them. */
  files: ConfigFile[];
}

/** A file of the configuration, named as a message names it. */
export interface ConfigFile {
  option: 'the config file' | 'the tokenFile';
  path: string;
}

function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? path.join(os.homedir(), p.slice(1)) : p;
}

/**
 * The config file read when --config is not given: `lead-enrich/config.json` in the user's config
 * folder ($XDG_CONFIG_HOME, else ~/.config, on Linux; the platform's own elsewhere).
 */
export function defaultConfigPath(env: NodeJS.ProcessEnv = processEnv(), platform: NodeJS.Platform = process.platform): string {
  const home = os.homedir();
  if (platform === 'darwin') return path.join(home, 'Library', 'Preferences', 'lead-enrich', 'config.json');
  if (platform === 'win32') return path.join(env['APPDATA'] || path.join(home, 'AppData', 'Roaming'), 'lead-enrich', 'Config', 'config.json');
  // As the store's default path: a relative XDG value is invalid and ignored (the XDG spec).
  const xdg = env['XDG_CONFIG_HOME'];
  const base = xdg !== undefined && path.isAbsolute(xdg) ? xdg : path.join(home, '.config');
  return path.join(base, 'lead-enrich', 'config.json');
}

/** Which config file a command reads, and how to name it in a message: --config, else LEAD_ENRICH_CONFIG, else the default one when it exists. */
export function chooseConfigFile(given: string | undefined, env: NodeJS.ProcessEnv): { path: string; from: string } | undefined {
  if (given !== undefined) return { path: given, from: 'the --config path' };
  const named = env[OPTIONS.config.env];
  if (named) return { path: named, from: OPTIONS.config.env };
  const file = defaultConfigPath(env);
  return fs.existsSync(file) ? { path: file, from: 'the default config file' } : undefined;
}

export function readConfigFile(configPath: string, warn: (line: string) => void = () => {}, from = 'the --config path'): FileConfig {
  const file = expandHome(configPath);
  const read = readPrivateFile(file, `config file ${configPath}`, `check ${from}`);
  const text = read.text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`Invalid config file ${configPath}: not valid JSON (${(error as Error).message}); fix it to match config.example.json`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ConfigError(`Invalid config file ${configPath}: must hold a JSON object like config.example.json`);
  }
  const config: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (key.startsWith('$') || key === '_comment') continue; // "$schema" and comments are allowed
    // Own keys only: "toString", "constructor" or "__proto__" must be unknown keys, not
    // Object.prototype members called as rules.
    if (!(CONFIG_KEYS as readonly string[]).includes(key)) {
      const guess = didYouMean(key, CONFIG_KEYS);
      throw new ConfigError(
        `Invalid config file ${configPath}: unknown key "${key}"${guess ? ` (did you mean "${guess}"?)` : ''}; remove or rename it (allowed: ${CONFIG_KEYS.join(', ')})`,
      );
    }
    readOption(key as RuledName, value, { configFile: configPath });
    config[key] = value;
  }
  const readable = typeof config.token === 'string' ? readableWarning(`the config file ${configPath} holds a token and`, configPath, read) : undefined;
  if (readable) warn(readable);
  return config as FileConfig;
}

/** Where "tokenFile" leads: relative to the config file's folder. */
function tokenFilePath(tokenFile: string, configPath: string | undefined): string {
  return path.resolve(configPath ? path.dirname(expandHome(configPath)) : process.cwd(), expandHome(tokenFile));
}

function readTokenFile(tokenFile: string, configPath: string | undefined, warn: ((line: string) => void) | undefined): string {
  const resolved = tokenFilePath(tokenFile, configPath);
  const read = readPrivateFile(resolved, `tokenFile ${tokenFile}`, 'fix "tokenFile" in the config file');
  const readable = readableWarning(`the tokenFile ${resolved}`, resolved, read);
  if (readable) warn?.(readable);
  const token = read.text.trim();
  if (!token) throw new ConfigError(`tokenFile ${tokenFile} is empty; put the API token in it`);
  return token;
}

/** Resolves base URL and token by precedence; pipeline defaults stay in `file` for the commands. */
export function resolveConfig(sources: ConfigSources): ResolvedConfig {
  const env = sources.env ?? processEnv();
  const chosen = chooseConfigFile(sources.configPath, env);
  const file = chosen ? readConfigFile(chosen.path, sources.warn, chosen.from) : {};
  const fileDoor: Door = { configFile: chosen?.path ?? '' };
  const fromFile = <K extends RuledName>(name: K) => readOption(name, file[name], fileDoor);
  const baseUrl = readGiven('baseUrl', { flag: sources.baseUrlFlag, file, fileDoor, env });
  const envToken = env[OPTIONS.token.env];
  let token: string | undefined;
  let tokenSource: string | undefined;
  if (envToken) {
    token = envToken.trim();
    tokenSource = OPTIONS.token.env;
  } else if (fromFile('token')) {
    token = fromFile('token')!.trim();
    tokenSource = 'config file "token"';
  } else if (fromFile('tokenFile')) {
    token = readTokenFile(fromFile('tokenFile')!, chosen?.path, sources.warn);
    tokenSource = 'config file "tokenFile"';
  }
  const files: ConfigFile[] = chosen ? [{ option: 'the config file', path: expandHome(chosen.path) }] : [];
  const tokenFile = fromFile('tokenFile');
  if (tokenFile !== undefined) files.push({ option: 'the tokenFile', path: tokenFilePath(tokenFile, chosen?.path) });
  return { file, fileDoor, baseUrl, token, tokenSource, files };
}

/** Shorter than this, a token cannot be the API's. */
export const MIN_TOKEN_LENGTH = 16;

/** Errors for a missing target, worded for the command line. */
export function requireTarget(config: ResolvedConfig): { baseUrl: string; token: string } {
  if (!config.baseUrl) {
    throw new ConfigError('No API base URL: pass --base-url URL, set LEAD_API_BASE_URL, or set "baseUrl" in the --config file (or try --sandbox)');
  }
  if (!config.token) {
    throw new ConfigError('No API token: set LEAD_API_TOKEN, or "token" / "tokenFile" in the --config file (or try --sandbox)');
  }
  // A token this short is a placeholder or a typo, never a real one: said before any request (and
  // masking it in messages would mask every letter it shares with them).
  if (config.token.length < MIN_TOKEN_LENGTH) {
    throw new ConfigError(
      `The API token from ${config.tokenSource ?? 'the configuration'} is ${config.token.length} ${config.token.length === 1 ? 'character' : 'characters'} long: a real token has at least ${MIN_TOKEN_LENGTH}; set the token the Lead Lookup API gave you (or try --sandbox)`,
    );
  }
  return { baseUrl: config.baseUrl, token: config.token };
}

import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError, EXIT } from './exit-codes.ts';

/** Where the CLI finds the API and its keys. */
export type CliSettings = { url: string; apiKey: string | undefined; adminKey: string | undefined; configFile: string };

type ConfigFile = { url?: string; apiKey?: string; adminKey?: string };

/**
 * The environment first (`CADENZA_URL`, `CADENZA_API_KEY`, `CADENZA_ADMIN_KEY`), then the config file
 * (`CADENZA_CONFIG`, default `~/.config/cadenza/config.json`: `{"url", "apiKey", "adminKey"}`), then the local default URL.
 */
export function loadSettings(processEnv: NodeJS.ProcessEnv): CliSettings {
  // An empty variable counts as unset.
  const env = Object.fromEntries(Object.entries(processEnv).filter(([, v]) => v !== '')) as NodeJS.ProcessEnv;
  const configFile = env.CADENZA_CONFIG ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'cadenza', 'config.json');
  const file = readConfigFile(configFile, env.CADENZA_CONFIG !== undefined);
  const url = (env.CADENZA_URL ?? file.url ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+/.test(url)) throw new CliError(`CADENZA_URL must be an http(s) URL, got '${url}'`, EXIT.usage);
  return { url, apiKey: env.CADENZA_API_KEY ?? file.apiKey, adminKey: env.CADENZA_ADMIN_KEY ?? file.adminKey, configFile };
}

function readConfigFile(path: string, named: boolean): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !named) return {};
    throw new CliError(`cannot read the config file ${path}: ${(err as Error).message}`, EXIT.usage);
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
    for (const k of ['url', 'apiKey', 'adminKey'] as const) {
      const v = (parsed as Record<string, unknown>)[k];
      if (v !== undefined && typeof v !== 'string') throw new Error(`${k} must be a string`);
    }
    return parsed as ConfigFile;
  } catch (err) {
    throw new CliError(`the config file ${path} is invalid: ${(err as Error).message}`, EXIT.usage);
  }
}

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { toAppDefinition, type AppDefinition, type ToolDefinition } from './app-definition.ts';
import { createAppManifestSchema, createInputSchemaCompiler } from './app-schema.ts';

export type { AppDefinition, AppProvider, ToolDefinition, ToolHttp } from './app-definition.ts';

/** Why one app folder was skipped. */
export type AppLoadError = { appDir: string; message: string };

/** The apps and tools known to this process, built once at start-up. */
export interface AppRegistry {
  readonly apps: readonly AppDefinition[];
  readonly errors: readonly AppLoadError[];
  /** The tool named `<app-id>.<tool-name>`, if loaded. */
  getTool(qualifiedName: string): ToolDefinition | undefined;
  listTools(): ToolDefinition[];
}

/** Where the registry reports apps it skipped. */
export type AppRegistryLogger = { warn(msg: string, fields?: object): void };

/** Builds a registry from apps already in memory (tests, built-in apps). */
export function createAppRegistry(apps: readonly AppDefinition[], errors: readonly AppLoadError[] = []): AppRegistry {
  const tools = new Map(apps.flatMap((app) => app.tools.map((tool) => [tool.qualifiedName, tool] as const)));
  return {
    apps,
    errors,
    getTool: (qualifiedName) => tools.get(qualifiedName),
    listTools: () => [...tools.values()],
  };
}

/** Scans `appsDir/<app-id>/app.yml`; an app that fails to load is warned about and skipped, the rest load. */
export async function loadAppRegistry(appsDir: string, opts: { logger?: AppRegistryLogger } = {}): Promise<AppRegistry> {
  const schema = createAppManifestSchema(createInputSchemaCompiler());
  const apps: AppDefinition[] = [];
  const errors: AppLoadError[] = [];
  // Sorted so that load order, and so which of two clashing apps wins, never depends on the file system.
  for (const folder of (await listFolders(appsDir)).sort()) {
    const appDir = join(appsDir, folder);
    const outcome = await loadApp(appDir, folder, schema, apps);
    if (outcome === undefined) continue;
    if (typeof outcome === 'string') {
      errors.push({ appDir, message: outcome });
      opts.logger?.warn('app skipped: it failed to load', { appDir, error: outcome });
    } else {
      apps.push(outcome);
    }
  }
  return createAppRegistry(apps, errors);
}

/** The loaded app, the reason it cannot load, or undefined for a plain file beside the app folders. */
async function loadApp(
  appDir: string,
  folder: string,
  schema: ReturnType<typeof createAppManifestSchema>,
  loaded: readonly AppDefinition[],
): Promise<AppDefinition | string | undefined> {
  let text: string;
  try {
    text = await readFile(join(appDir, 'app.yml'), 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') return undefined;
    if (code === 'ENOENT') return 'no app.yml in this folder';
    throw err;
  }
  const doc = parseDocument(text);
  const yamlError = doc.errors[0];
  if (yamlError) return `app.yml is not valid YAML: ${yamlError.message.split('\n')[0]}`;
  const raw: unknown = doc.toJS();
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'app.yml must be a YAML mapping';
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return `app.yml is invalid: ${formatIssues(parsed.error.issues)}`;
  const { id } = parsed.data;
  if (id !== folder) return `app id '${id}' does not match its folder name '${folder}'`;
  if (loaded.some((app) => app.id === id)) return `duplicate app id '${id}'`;
  return toAppDefinition(parsed.data);
}

function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
      return `${path.replace(/^\./, '') || '(root)'}: ${issue.message}`;
    })
    .join('; ');
}

async function listFolders(appsDir: string): Promise<string[]> {
  try {
    return (await readdir(appsDir)).filter((name) => !name.startsWith('.'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { toAppDefinition, type AppDefinition, type SkippedTool, type ToolDefinition } from './app-definition.ts';
import {
  createAppManifestSchema,
  createInputSchemaCompiler,
  createToolSchema,
  type InputSchemaCompiler,
  type ToolManifest,
} from './app-schema.ts';

export type { AppDefinition, AppProvider, SkippedTool, ToolDefinition, ToolHttp } from './app-definition.ts';

/** Why one app folder was skipped; `appId` is its folder name, the id a skill would use. */
export type AppLoadError = { appDir: string; appId: string; message: string };

/** The apps and tools known to this process, built once at start-up. */
export interface AppRegistry {
  readonly apps: readonly AppDefinition[];
  readonly errors: readonly AppLoadError[];
  /** The tool named `<app-id>.<tool-name>`, if loaded. */
  getTool(qualifiedName: string): ToolDefinition | undefined;
  getApp(appId: string): AppDefinition | undefined;
  listTools(): ToolDefinition[];
  /** Why a tool (or an `<app-id>.*` entry) named by a skill did not load: its declaration or its whole app was broken. */
  loadError(qualifiedName: string): string | undefined;
}

/** Where the registry reports apps and tools it skipped. */
export type AppRegistryLogger = { warn(msg: string, fields?: object): void; error(msg: string, fields?: object): void };

/** Builds a registry from apps already in memory (tests, built-in apps). */
export function createAppRegistry(apps: readonly AppDefinition[], errors: readonly AppLoadError[] = []): AppRegistry {
  const tools = new Map(apps.flatMap((app) => app.tools.map((tool) => [tool.qualifiedName, tool] as const)));
  const byId = new Map(apps.map((app) => [app.id, app]));
  // A skipped duplicate shares its name with the twin that loaded: only names that did not load keep an error.
  const skipped = new Map(
    apps.flatMap((app) => app.skipped.filter((t) => !tools.has(t.qualifiedName)).map((t) => [t.qualifiedName, t.error] as const)),
  );
  return {
    apps,
    errors,
    getTool: (qualifiedName) => tools.get(qualifiedName),
    getApp: (appId) => byId.get(appId),
    listTools: () => [...tools.values()],
    loadError(qualifiedName) {
      const own = skipped.get(qualifiedName);
      if (own !== undefined) return own;
      const appId = qualifiedName.slice(0, qualifiedName.indexOf('.'));
      const app = errors.find((e) => e.appId === appId);
      return app ? `app ${appId} failed to load: ${app.message}` : undefined;
    },
  };
}

/**
 * Scans `appsDir/<app-id>/app.yml`; an app that cannot be read is warned about and skipped, a tool whose declaration
 * is invalid is logged as an error and skipped alone, and the rest load.
 */
export async function loadAppRegistry(appsDir: string, opts: { logger?: AppRegistryLogger } = {}): Promise<AppRegistry> {
  const schema = createAppManifestSchema();
  const compile = createInputSchemaCompiler();
  const apps: AppDefinition[] = [];
  const errors: AppLoadError[] = [];
  // Sorted so that load order, and so which of two clashing apps wins, never depends on the file system.
  for (const folder of (await listFolders(appsDir)).sort()) {
    const appDir = join(appsDir, folder);
    const outcome = await loadApp(appDir, folder, schema, compile, apps);
    if (outcome === undefined) continue;
    if (typeof outcome === 'string') {
      errors.push({ appDir, appId: folder, message: outcome });
      opts.logger?.warn('app skipped: it failed to load', { appDir, error: outcome });
      continue;
    }
    for (const tool of outcome.skipped) {
      opts.logger?.error('tool skipped: its declaration is invalid', { app: outcome.id, tool: tool.name, reason: tool.error });
    }
    apps.push(outcome);
  }
  return createAppRegistry(apps, errors);
}

/** The loaded app, the reason it cannot load, or undefined for a plain file beside the app folders. */
async function loadApp(
  appDir: string,
  folder: string,
  schema: ReturnType<typeof createAppManifestSchema>,
  compile: InputSchemaCompiler,
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
  const toolSchema = createToolSchema(compile, parsed.data.providers);
  const tools: ToolManifest[] = [];
  const skipped: SkippedTool[] = [];
  parsed.data.tools.forEach((raw, i) => {
    const rawName = (raw as { name?: unknown } | null)?.name;
    const name = typeof rawName === 'string' && rawName !== '' ? rawName : `#${i + 1}`;
    const tool = toolSchema.safeParse(raw);
    let error = tool.success ? undefined : formatIssues(tool.error.issues);
    if (tool.success && tools.some((t) => t.name === tool.data.name)) error = `duplicate tool name '${name}'`;
    if (error !== undefined || !tool.success) skipped.push({ qualifiedName: `${id}.${name}`, name, error: error ?? 'invalid' });
    else tools.push(tool.data);
  });
  return toAppDefinition(parsed.data, tools, skipped);
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

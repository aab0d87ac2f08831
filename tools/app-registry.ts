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

import { listedApp, type McpListing } from './mcp/mcp-listing.ts';

export type { AppDefinition, AppProvider, SkippedTool, ToolDefinition, ToolHttp } from './app-definition.ts';

/** Why one app folder was skipped; `appId` is its folder name, the id a skill would use. */
export type AppLoadError = { appDir: string; appId: string; message: string };

/** The apps and tools known to this process, built once at start-up; MCP apps get their tools from a listing. */
export interface AppRegistry {
  readonly apps: readonly AppDefinition[];
  readonly errors: readonly AppLoadError[];
  /** The tool named `<app-id>.<tool-name>`, if loaded. */
  getTool(qualifiedName: string): ToolDefinition | undefined;
  getApp(appId: string): AppDefinition | undefined;
  listTools(): ToolDefinition[];
  /** Why a tool (or an `<app-id>.*` entry) named by a skill did not load: its declaration or its whole app was broken. */
  loadError(qualifiedName: string): string | undefined;
  /** The apps that declare an MCP server, as declared (without tools). */
  readonly mcpApps: readonly AppDefinition[];
  /** Gives an MCP app the tools of a listing, or moves it to the errors with the listing's reason. */
  applyMcpListing(listing: McpListing): void;
}

/** Where the registry reports apps and tools it skipped. */
export type AppRegistryLogger = { warn(msg: string, fields?: object): void; error(msg: string, fields?: object): void };

const NOT_LISTED = 'its MCP server has not been listed yet (a worker lists it when it starts)';

/** Builds a registry from apps already in memory (tests, built-in apps). */
export function createAppRegistry(
  declared: readonly AppDefinition[],
  loadErrors: readonly AppLoadError[] = [],
  compile: InputSchemaCompiler = createInputSchemaCompiler(),
): AppRegistry {
  const mcpApps = declared.filter((app) => app.mcp !== undefined);
  // An MCP app's current state: listed (with its tools) or the reason it is not.
  const listed = new Map<string, AppDefinition | string>();
  const listedAt = new Map<string, number>();
  let index = buildIndex();

  function buildIndex() {
    const apps: AppDefinition[] = [];
    const errors = [...loadErrors];
    for (const app of declared) {
      const state = app.mcp ? (listed.get(app.id) ?? NOT_LISTED) : app;
      if (typeof state === 'string')
        errors.push({ appDir: app.mcp?.transport === 'stdio' ? (app.mcp.cwd ?? '') : '', appId: app.id, message: state });
      else apps.push(state);
    }
    const tools = new Map(apps.flatMap((app) => app.tools.map((tool) => [tool.qualifiedName, tool] as const)));
    // A skipped duplicate shares its name with the twin that loaded: only names that did not load keep an error.
    const skipped = new Map(
      apps.flatMap((app) => app.skipped.filter((t) => !tools.has(t.qualifiedName)).map((t) => [t.qualifiedName, t.error] as const)),
    );
    return { apps, errors, tools, skipped, byId: new Map(apps.map((app) => [app.id, app])) };
  }

  return {
    get apps() {
      return index.apps;
    },
    get errors() {
      return index.errors;
    },
    mcpApps,
    getTool: (qualifiedName) => index.tools.get(qualifiedName),
    getApp: (appId) => index.byId.get(appId),
    listTools: () => [...index.tools.values()],
    loadError(qualifiedName) {
      const own = index.skipped.get(qualifiedName);
      if (own !== undefined) return own;
      const appId = qualifiedName.slice(0, qualifiedName.indexOf('.'));
      const app = index.errors.find((e) => e.appId === appId);
      return app ? `app ${appId} failed to load: ${app.message}` : undefined;
    },
    applyMcpListing(listing) {
      const app = mcpApps.find((a) => a.id === listing.appId);
      // The same listing read again (or an older one) changes nothing.
      if (!app || listing.listedAt.getTime() <= (listedAt.get(app.id) ?? -Infinity)) return;
      listedAt.set(app.id, listing.listedAt.getTime());
      listed.set(app.id, listing.ok ? listedApp(app, listing.tools, compile) : `its MCP server could not be listed: ${listing.error}`);
      index = buildIndex();
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
  return createAppRegistry(apps, errors, compile);
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
  (parsed.data.tools ?? []).forEach((raw, i) => {
    const rawName = (raw as { name?: unknown } | null)?.name;
    const name = typeof rawName === 'string' && rawName !== '' ? rawName : `#${i + 1}`;
    const tool = toolSchema.safeParse(raw);
    let error = tool.success ? undefined : formatIssues(tool.error.issues);
    if (tool.success && tools.some((t) => t.name === tool.data.name)) error = `duplicate tool name '${name}'`;
    if (error !== undefined || !tool.success) skipped.push({ qualifiedName: `${id}.${name}`, name, error: error ?? 'invalid' });
    else tools.push(tool.data);
  });
  // A stdio MCP server runs in its app's folder, so its command may name files beside app.yml.
  const mcp = parsed.data.mcp?.transport === 'stdio' ? { ...parsed.data.mcp, cwd: appDir } : parsed.data.mcp;
  return toAppDefinition({ ...parsed.data, ...(mcp ? { mcp } : {}) }, tools, skipped);
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

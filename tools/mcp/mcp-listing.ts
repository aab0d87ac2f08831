import { TOOL_NAME_PATTERN } from '../../contracts/names.ts';
import type { AppDefinition, SkippedTool, ToolDefinition } from '../app-definition.ts';
import type { InputSchemaCompiler } from '../app-schema.ts';

/** One tool as its MCP server lists it (`tools/list`). */
export type McpListedTool = { name: string; title?: string; description?: string; inputSchema: Record<string, unknown> };

/**
 * What a worker found on an app's MCP server when it loaded: the server's tools, or why it could not list them.
 * Stored in Postgres (`mcp_listings`) so every process reads the same list without starting the server itself.
 */
export type McpListing = { appId: string; listedAt: Date } & ({ ok: true; tools: McpListedTool[] } | { ok: false; error: string });

/**
 * Cadenza's name for a server's tool: lowercased, every character outside `[a-z0-9_]` turned into `_`
 * (`trigger-long-running-operation` → `trigger_long_running_operation`), so MCP tools follow the one tool-name rule.
 */
export function mcpToolName(serverName: string): string {
  return serverName.toLowerCase().replace(/[^a-z0-9_]/g, '_');
}

/**
 * The app with its tools from a listing: filtered by `include`/`exclude` (server names), named by `mcpToolName`; a
 * tool whose name or input schema cannot be used is skipped alone, with its reason.
 */
export function listedApp(app: AppDefinition, tools: readonly McpListedTool[], compile: InputSchemaCompiler): AppDefinition {
  const spec = app.mcp;
  if (!spec) throw new TypeError(`app ${app.id} declares no MCP server`);
  const loaded: ToolDefinition[] = [];
  const skipped: SkippedTool[] = [];
  const skip = (name: string, error: string) => skipped.push({ qualifiedName: `${app.id}.${name}`, name, error });
  const onServer = new Set(tools.map((t) => t.name));
  for (const name of spec.include?.filter((n) => !onServer.has(n)) ?? [])
    skip(mcpToolName(name), `'${name}' is in include but not on the server`);
  for (const tool of tools) {
    if (spec.include && !spec.include.includes(tool.name)) continue;
    if (spec.exclude.includes(tool.name)) continue;
    const name = mcpToolName(tool.name);
    if (!TOOL_NAME_PATTERN.test(name)) {
      skip(name.slice(0, 48) || '#', `server tool '${tool.name}' has no usable name (1-48 letters, digits, '_', '-')`);
      continue;
    }
    if (loaded.some((t) => t.name === name)) {
      skip(name, `server tool '${tool.name}' has the same name as another once normalised`);
      continue;
    }
    const validateInput = compileInput(compile, tool.inputSchema);
    if (typeof validateInput === 'string') {
      skip(name, validateInput);
      continue;
    }
    loaded.push({
      qualifiedName: `${app.id}.${name}`,
      appId: app.id,
      name,
      description: tool.description?.trim() || tool.title?.trim() || tool.name,
      inputSchema: tool.inputSchema,
      timeoutS: spec.timeoutS,
      retries: spec.retries,
      approval: spec.approval.includes(tool.name),
      providers: app.providers,
      ...(app.requiresAccount !== undefined ? { requiresAccount: app.requiresAccount } : {}),
      mcp: { tool: tool.name },
      validateInput,
    });
  }
  return { ...app, tools: loaded, skipped };
}

function compileInput(compile: InputSchemaCompiler, schema: Record<string, unknown>) {
  if (schema.type !== 'object') return 'input schema must have type: object';
  // `$schema` only names the draft; servers announce drafts Ajv's default build does not register (2020-12).
  const { $schema: _draft, ...rest } = schema;
  try {
    return compile(rest);
  } catch (err) {
    return `invalid input schema: ${(err as Error).message}`;
  }
}

import type { ValidateFunction } from 'ajv';
import type { AppManifest, AppProviderManifest, ToolManifest } from './app-schema.ts';
import type { McpServerSpec } from './mcp/mcp-schema.ts';

/** How a tool is called over HTTP; `url` and header values may hold `${NAME}` and `${provider.<id>}` placeholders. */
export type ToolHttp = { url: string; method: 'POST'; headers: Record<string, string> };

/**
 * A provider a tool depends on: a standard one needs an API key found by the secret lookup (user → tenant →
 * `PROVIDER_KEY_<ID>`); `noApiKey` means that lookup is not used (it may authenticate otherwise). `health`, when
 * declared, is probed and must pass.
 */
export type AppProvider = AppProviderManifest;

/** A tool served by its app's MCP server: `tool` is its name there (Cadenza's own name may be normalised). */
export type McpToolRef = { tool: string };

/**
 * A tool the mission's caller runs (`runs: client`): the mission waits for the result sent to its API, until
 * `timeoutS`; `validateOutput`, when the tool declares `output_schema`, checks that result.
 */
export type ClientToolRef = { outputSchema?: Record<string, unknown>; validateOutput?: ValidateFunction };

/** One callable tool, addressed as `<app-id>.<tool-name>`; `retries` counts attempts after the first. */
export type ToolDefinition = ToolCommon &
  (
    | { http: ToolHttp; mcp?: undefined; client?: undefined }
    | { mcp: McpToolRef; http?: undefined; client?: undefined }
    | { client: ClientToolRef; http?: undefined; mcp?: undefined }
  );
/** A tool called over HTTP. */
export type HttpToolDefinition = ToolCommon & { http: ToolHttp };
/** A tool on an MCP server. */
export type McpToolDefinition = ToolCommon & { mcp: McpToolRef };

type ToolCommon = {
  qualifiedName: string;
  appId: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  timeoutS: number;
  retries: number;
  /** The providers this tool needs: every one must be usable for the tool to be offered. */
  providers: AppProvider[];
  requiresAccount?: string;
  /** Whether a person approves every call first (`approval: required`); a skill may require it for more tools. */
  approval: boolean;
  /** Precompiled validator of `inputSchema` (not serialisable). */
  validateInput: ValidateFunction;
};

/** A tool whose declaration is invalid: skipped alone, never offered, listed with its reason for admins. */
export type SkippedTool = { qualifiedName: string; name: string; error: string };

/** A loaded app: its declaration, its tools, and the tools skipped for a broken declaration. */
export type AppDefinition = {
  id: string;
  name: string;
  description: string;
  providers: AppProvider[];
  requiresAccount?: string;
  /** false: hidden until an admin enables it for a tenant. */
  defaultEnabled: boolean;
  /** The app's MCP server, whose listing gives its tools (empty until listed). */
  mcp?: McpServerSpec;
  tools: ToolDefinition[];
  skipped: SkippedTool[];
};

/** Converts a parsed `app.yml` and its checked tools into the registry's camel-cased definitions. */
export function toAppDefinition(manifest: AppManifest, tools: readonly ToolManifest[], skipped: SkippedTool[]): AppDefinition {
  const requiresAccount = manifest.requires_account;
  return {
    id: manifest.id,
    name: manifest.name,
    description: manifest.description,
    providers: manifest.providers,
    ...(requiresAccount !== undefined && { requiresAccount }),
    defaultEnabled: manifest.default_enabled,
    ...(manifest.mcp ? { mcp: manifest.mcp } : {}),
    tools: tools.map((tool) => ({
      qualifiedName: `${manifest.id}.${tool.name}`,
      appId: manifest.id,
      name: tool.name,
      description: tool.description,
      inputSchema: tool.input_schema.schema,
      timeoutS: tool.timeout_s,
      retries: tool.retries,
      providers: tool.needs,
      ...(requiresAccount !== undefined && { requiresAccount }),
      approval: tool.approval === 'required',
      validateInput: tool.input_schema.validate,
      ...(tool.http
        ? { http: { url: tool.http.url, method: tool.http.method, headers: tool.http.headers } }
        : {
            client: tool.output_schema ? { outputSchema: tool.output_schema.schema, validateOutput: tool.output_schema.validate } : {},
          }),
    })),
    skipped,
  };
}

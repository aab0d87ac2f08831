import type { ValidateFunction } from 'ajv';
import type { AppManifest } from './app-schema.ts';

/** How a tool is called over HTTP; `url` and header values may hold `${NAME}` placeholders filled at call time. */
export type ToolHttp = { url: string; method: 'POST'; headers: Record<string, string> };

/** One callable tool, addressed as `<app-id>.<tool-name>`; `retries` counts attempts after the first. */
export type ToolDefinition = {
  qualifiedName: string;
  appId: string;
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  timeoutS: number;
  retries: number;
  requiresAccount?: string;
  http: ToolHttp;
  /** Precompiled validator of `inputSchema` (not serialisable). */
  validateInput: ValidateFunction;
};

/** A provider that makes an app's tools usable: no key needed, or the listed environment variables set. */
export type AppProvider = { name: string; noApiKey: boolean; env: string[] };

/** A loaded app: its declaration and its tools. */
export type AppDefinition = {
  id: string;
  name: string;
  description: string;
  providers: AppProvider[];
  requiresAccount?: string;
  tools: ToolDefinition[];
};

/** Converts a parsed `app.yml` into the registry's camel-cased definitions. */
export function toAppDefinition(manifest: AppManifest): AppDefinition {
  const requiresAccount = manifest.requires_account;
  return {
    id: manifest.id,
    name: manifest.name,
    description: manifest.description,
    providers: manifest.providers.map((p) => ({ name: p.name, noApiKey: p.no_api_key ?? false, env: p.env ?? [] })),
    ...(requiresAccount !== undefined && { requiresAccount }),
    tools: manifest.tools.map((tool) => ({
      qualifiedName: `${manifest.id}.${tool.name}`,
      appId: manifest.id,
      name: tool.name,
      description: tool.description,
      inputSchema: tool.input_schema.schema,
      timeoutS: tool.timeout_s,
      retries: tool.retries,
      ...(requiresAccount !== undefined && { requiresAccount }),
      http: { url: tool.http.url, method: tool.http.method, headers: tool.http.headers },
      validateInput: tool.input_schema.validate,
    })),
  };
}

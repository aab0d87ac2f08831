import type { ValidateFunction } from 'ajv';
import type { Kysely } from 'kysely';
import type { Database, MissionRow } from '../../db/schema.ts';
import type { Logger } from '../../lib/logger.ts';
import type { EmbeddingsClient } from '../../memory/embeddings-client.ts';
import type { VectorSearch } from '../../memory/vector-search.ts';
import type { AppRegistry } from '../app-registry.ts';
import { createInputSchemaCompiler } from '../app-schema.ts';
import { formatAjvErrors, type ToolReply } from '../http-executor.ts';

/** The app id system tools are qualified with (`system.save_memory`); every mission is offered them. */
export const SYSTEM_APP_ID = 'system';

/** What a system tool may use: the database and the mission it runs for (owner, skill, workspace). */
export type SystemToolContext = {
  db: Kysely<Database>;
  mission: MissionRow;
  signal: AbortSignal;
  logger: Logger;
  /** The tool-use id of this call: a key for writes that a retried call must not repeat. */
  toolUseId?: string;
  /** The turn that asked for this call: where calls a script makes through it are recorded. */
  turn?: number;
  /** When the activity attempt running this call was scheduled (ms): the calls a script makes are recorded under it. */
  attemptScheduledMs?: number;
  /** The embeddings endpoint, when configured. */
  embeddings?: EmbeddingsClient | undefined;
  /** How retrieval compares vectors (pgvector or in process), chosen at start. */
  vectors: VectorSearch;
  /** The installed apps, for tools that check a skill's `allowed-tools`. */
  registry?: Pick<AppRegistry, 'getTool'> | undefined;
  /** Whether a qualified tool name is installed (an app's tool or a system tool); set by the system tool registry. */
  isInstalled?: ((qualifiedName: string) => boolean) | undefined;
};

/** A built-in tool implemented in TypeScript; its model-facing name is its bare name. */
export type SystemTool = {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  timeoutS: number;
  /** Runs the call; problems the model should see are `{ok:false}`, infrastructure errors are thrown (retried). */
  run(input: Record<string, unknown>, ctx: SystemToolContext): Promise<ToolReply>;
};

/** The system tools of this process, looked up by qualified name, with their inputs validated before they run. */
export type SystemToolRegistry = {
  list(): SystemTool[];
  get(qualifiedName: string): SystemTool | undefined;
  run(qualifiedName: string, input: unknown, ctx: SystemToolContext): Promise<ToolReply>;
};

export function createSystemToolRegistry(tools: SystemTool[]): SystemToolRegistry {
  const compile = createInputSchemaCompiler();
  const byName = new Map<string, { tool: SystemTool; validate: ValidateFunction }>(
    tools.map((tool) => [`${SYSTEM_APP_ID}.${tool.name}`, { tool, validate: compile(tool.inputSchema) }]),
  );
  return {
    list: () => tools,
    get: (qualifiedName) => byName.get(qualifiedName)?.tool,
    async run(qualifiedName, input, ctx) {
      const entry = byName.get(qualifiedName);
      if (!entry) return { ok: false, error: `unknown system tool ${qualifiedName}` };
      if (!entry.validate(input))
        return { ok: false, error: `input does not match the tool schema: ${formatAjvErrors(entry.validate.errors)}` };
      const isInstalled = (tool: string) =>
        byName.has(tool) || (!tool.startsWith(`${SYSTEM_APP_ID}.`) && (ctx.registry ? ctx.registry.getTool(tool) !== undefined : true));
      return entry.tool.run(input as Record<string, unknown>, { ...ctx, isInstalled });
    },
  };
}

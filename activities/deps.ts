import type { Kysely } from 'kysely';
import type { Config, ScriptSettings } from '../config/config.ts';
import type { Database } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import type { VectorSearch } from '../memory/vector-search.ts';
import type { ModelClient } from '../model/model-types.ts';
import type { ModelTargets } from '../model/model-targets.ts';
import type { SecretStore } from '../secrets/secret-store.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import type { HealthMonitor } from '../tools/health.ts';
import type { McpPool } from '../tools/mcp/mcp-pool.ts';
import type { SystemToolRegistry } from '../tools/system/system-tool.ts';
import type { ToolCancels } from '../notify/tool-cancels.ts';
import type { LivePublisher } from '../contracts/events.ts';

/** What the mission activities need, built once by the worker's composition root; tests pass real local services. */
export type ActivityDeps = {
  db: Kysely<Database>;
  /** MODEL_PROVIDER's client (compaction and the script factory use it; the model activity goes through `modelTargets`). */
  modelClient: ModelClient;
  /** Each tier's chain of models, the primary then its fallbacks, with their clients. */
  modelTargets: ModelTargets;
  registry: AppRegistry;
  /** Built-in tools every mission has. */
  systemTools: SystemToolRegistry;
  model: Pick<Config['model'], 'tiers' | 'maxTokens' | 'prices' | 'providerLimits'>;
  /** The embeddings endpoint joining memory retrieval, when configured. */
  embeddings: EmbeddingsClient | undefined;
  /** How retrieval and discovery compare vectors (pgvector or in process), chosen at start. */
  vectors: VectorSearch;
  logger: Logger;
  /** The environment HTTP tool headers may reference (`${NAME}`). */
  env: Record<string, string | undefined>;
  /** How long an activity waits out an unreachable database (DATABASE_OUTAGE_WAIT_SECONDS). */
  databaseOutageWaitSeconds: number;
  /** Provider keys (user → tenant → server), resolved by the tool activity at call time only. */
  secrets: SecretStore;
  /** Last results of the providers' health probes. */
  health: HealthMonitor;
  /** MAX_TOOLS_PER_MISSION: beyond it, the app tools most relevant to the objective are preselected. */
  maxToolsPerMission: number;
  /** MISSION_FILE_*: the caps on the files a mission's tools and scripts return. */
  missionFiles: Config['missionFiles'];
  /** The script factory (create_script): FACTORY_MAX_ATTEMPTS and the sandbox its attempts run in. */
  factory: { maxAttempts: number; scripts: ScriptSettings };
  /** The process's MCP server connections, shared by every tool call. */
  mcp: McpPool;
  /** APPROVAL_TIMEOUT_S, frozen into each mission's plan. */
  approvalTimeoutS: number;
  /** SESSION_IDLE_TTL_S, frozen into each session's plan. */
  sessionIdleTtlS: number;
  /** CONTEXT_COMPACT_AT_TOKENS (0: off) and CONTEXT_KEEP_TURNS, frozen into each plan. */
  compaction: { atTokens: number; keepTurns: number };
  /** Live events (streamed text, tool progress) to SSE clients, outside workflow history; absent: none are sent. */
  live?: LivePublisher;
  /** Tool cancels announced by the API (the fast path; Temporal's cancellation stays the record); absent: heartbeats only. */
  toolCancels?: ToolCancels;
};

import type { ColumnType, Generated, Insertable, JSONColumnType, Selectable, Updateable } from 'kysely';
import type { MissionLimits } from '../contracts/limits.ts';
import type { SkillSpec } from '../contracts/skill-spec.ts';
import type { ToolSpec } from '../model/model-types.ts';
import type { MissionEvent } from '../contracts/events.ts';
import type { MissionError, MissionResult, MissionResume } from '../contracts/mission.ts';
import type { EvalMissionSetup, EvalSuite } from '../contracts/evals.ts';
import type { EvalResultsTable, EvalRunsTable } from './eval-tables.ts';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
/**
 * When the activity attempt that wrote a transcript row was scheduled (Temporal's currentAttemptScheduledTimestampMs):
 * a write replaces a row only when its attempt was scheduled no earlier (db/transcript.ts). 0 for rows written before
 * it was kept and for a retry's copies. Read back as a string (int8).
 */
type AttemptScheduledMs = ColumnType<string, number | undefined, number>;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** A jsonb column that may be null; written as JSON text. */
type NullableJson<T> = ColumnType<T | null, string | null, string | null>;

/** A warning about one field of a SKILL.md, by the field as written (`SkillFieldError` in skills/). */
type FieldWarning = { field: string; message: string };

/** Where an imported skill came from and the warnings its lenient reading raised. */
/** One thing the static scan of a bundle's code found, with where. */
export type ScanFinding = { file: string; line: number; kind: 'network' | 'process' | 'obfuscation' | 'secret'; message: string };

export type ImportAudit = {
  format: 'skill-md' | 'zip' | 'git';
  folder: string | null;
  importedAt: string;
  warnings: FieldWarning[];
  /** What the static scan of the bundle's code found: advice for the reviewer (the sandbox is the defence). */
  scan?: ScanFinding[];
  /** For git imports: the URL, the ref asked for, the folder's path and the commit the ref resolved to. */
  git?: { url: string; ref: string | null; path: string | null; commit: string };
};

/** A tool as frozen in a mission's catalog: what the model is offered, and how the tool activity runs it. */
/** `approval`: a person approves each call first (the tool's app.yml or the skill said so); absent on older missions. */
export type CatalogEntry = ToolSpec & {
  qualifiedName: string;
  timeoutS: number;
  retries: number;
  approval?: boolean;
  /** Run by the mission's caller (`runs: client`): the call waits for its result, `timeoutS` at most. */
  client?: boolean;
  /** An eval case's recorded answer: the call returns it without calling out. */
  stub?: { answer: unknown };
};

/**
 * One skill a mission ran or used, by the exact bytes: the main skill (`ran`), one loaded with `use_skill`
 * (`loaded`), or one whose scripts it ran (`script`).
 */
export type ProvenanceEntry = {
  role: 'ran' | 'loaded' | 'script';
  skillId: string;
  name: string;
  version: number;
  bundleSha256: string | null;
};

/** Why a mission failed or was cancelled, as clients see it. */
export type { MissionError };

/** An API key: only its sha256 is stored; it maps a bearer to a tenant, a user and capabilities. */
export interface ApiKeysTable {
  id: string;
  key_hash: string;
  key_prefix: string;
  tenant_id: string;
  user_id: string;
  capabilities: string[];
  created_at: CreatedAt;
  revoked_at: Timestamp | null;
  /** When the key last authenticated a request, to the minute (see markApiKeyUsed). */
  last_used_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** A skill of one owner; versions are immutable rows in skill_versions. */
export interface SkillsTable {
  id: string;
  tenant_id: string;
  owner_id: string;
  name: string;
  description: string;
  active_version: number;
  /** `draft` (out of use), `active`, or `quarantined` (an import awaiting review). */
  status: string;
  /** `authored`, `imported` or `promoted`. */
  source: ColumnType<string, string | undefined, string>;
  /** For imports: where it came from and the warnings its lenient reading raised. */
  import_audit: NullableJson<ImportAudit>;
  /** The mission that wrote the skill (`create_skill`) or whose run it was promoted from (migration 014). */
  mission_id: ColumnType<string | null, string | null | undefined, never>;
  /** A version awaiting the owner's review while `active_version` runs (the script factory's, migration 021). */
  draft_version: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** One immutable version of a skill: the SKILL.md bytes as received, the frontmatter as read and the spec it runs by. */
export interface SkillVersionsTable {
  skill_id: string;
  version: number;
  skill_md: string;
  sha256: string;
  frontmatter: JSONColumnType<Record<string, unknown>>;
  /** The parsed, effective settings (migration 007): every reader takes tier, tools and limits from here. */
  spec: JSONColumnType<SkillSpec>;
  body: string;
  /** The version's bundle in skill_bundles (null only for versions stored before bundles existed). */
  bundle_sha256: string | null;
  files: ColumnType<Array<{ path: string; size: number; sha256: string }>, string | undefined, never>;
  warnings: ColumnType<FieldWarning[], string | undefined, never>;
  /** The mission that wrote this version (`create_skill`, `update_skill`, promotion), when one did (migration 014). */
  mission_id: ColumnType<string | null, string | null | undefined, never>;
  /** How the version was made, when a process made it: the script factory's attempts (migration 021). */
  audit: ColumnType<Record<string, unknown> | null, string | null | undefined, never>;
  /** The eval cases its `evals/evals.json` gave (migration 035); null without one. */
  evals: ColumnType<EvalSuite | null, string | null | undefined, never>;
  created_at: CreatedAt;
}

/** A skill bundle (deterministic zip), stored once per content: its sha256 is its address. */
export interface SkillBundlesTable {
  sha256: string;
  bytes: Buffer;
  size: number;
  created_at: CreatedAt;
}

/** A discovery chunk of a skill version: its identity (name + description), one trigger, or one not_for ask. */
export interface SkillChunksTable {
  skill_id: string;
  version: number;
  ordinal: number;
  kind: string;
  text: string;
  search: ColumnType<string, never, never>;
  embedding: number[] | null;
  /** The encoder that made `embedding` (migration 023); null when there is none or it predates the column. */
  embedding_model: string | null;
}

/** One mission: identity and ownership, the frozen tool catalog, and the final outcome. */
export interface MissionsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  skill_id: string;
  skill_name: string;
  skill_version: number;
  objective: string;
  workspace_code: string;
  conversation_context: string | null;
  idempotency_key: string | null;
  max_turns: number;
  status: string;
  catalog: NullableJson<CatalogEntry[]>;
  system_prompt: string | null;
  result: NullableJson<MissionResult>;
  error: NullableJson<MissionError>;
  /** The effective limits and where each came from (migration 007); null on missions recorded before. */
  limits: NullableJson<MissionLimits>;
  /** The skills the mission ran and used, each once per role and version (migration 014); null on older missions. */
  provenance: NullableJson<ProvenanceEntry[]>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  finished_at: Timestamp | null;
  max_tokens: ColumnType<number | null, number | null | undefined, number | null>;
  max_cost_usd: ColumnType<number | null, number | null | undefined, number | null>;
  /** `budgetPolicy: "pause"`: how long the mission waits `paused` at its budget (null: the budget ends it). */
  budget_pause_s: ColumnType<number | null, number | null | undefined, number | null>;
  /** The mission this one retries (migration 015), and where its workflow resumes. */
  retry_of: ColumnType<string | null, string | null | undefined, string | null>;
  resume: ColumnType<MissionResume | null, string | null | undefined, string | null>;
  /** What the catalog left out and why, and the preselection when the catalog was over MAX_TOOLS_PER_MISSION. */
  tool_selection: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** The memories the user context held and why the rest were left out (`MemoryAccount`, migration 024). */
  context_memories: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** The embeds whose content the mission was started with (migration 016), in the order given. */
  embed_refs: ColumnType<string[] | null, string | null | undefined, string | null>;
  /** The events the workflow emits as it closes, stored with its end (migration 022): how the API ends a closed stream. */
  final_events: ColumnType<MissionEvent[] | null, string | null | undefined, string | null>;
  /** A session: idle after each answer, continued by messages (migration 026). */
  session: ColumnType<boolean, boolean | undefined, boolean>;
  /** A session's exchanges' results, oldest first (migration 026); null until the first one answers. */
  exchanges: ColumnType<MissionResult[] | null, never, never>;
  /** The schedule that started the mission (migration 027); null for missions started otherwise. */
  schedule_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The mission whose `delegate` call started this one (migration 036); null for a mission started otherwise. */
  parent_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** An eval run's mission: whether the procedure is in its prompt and which tools are stubbed (migration 035). */
  eval_setup: ColumnType<EvalMissionSetup | null, string | null | undefined, never>;
  /** The JSON Schema the mission's answer must match (migration 042), from its start or its skill; null: free text. */
  output_schema: ColumnType<Record<string, unknown> | null, string | null | undefined, never>;
}

/** How a schedule's runs are timed, as its owner gave it: a cron expression or an interval, in a time zone. */
export type ScheduleSpecJson = { cron?: string; every?: string; timezone?: string };
/** The limits each run of a schedule starts its mission with. */
export type ScheduleLimitsJson = { maxTurns?: number; maxTokens?: number; maxCostUsd?: number };

/** A recurring mission (migration 027): what each run starts; its timing is also the Temporal Schedule's. */
export interface SchedulesTable {
  id: string;
  tenant_id: string;
  user_id: string;
  skill: string;
  objective: string;
  workspace_code: string;
  spec: JSONColumnType<ScheduleSpecJson>;
  overlap: string;
  catchup_window: string;
  limits: JSONColumnType<ScheduleLimitsJson>;
  /** As last set through the API or seen by the detail; Temporal's description is the truth. */
  paused: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** One run a schedule took: the mission it started, or why none was. */
export interface ScheduleRunsTable {
  schedule_id: string;
  run_key: string;
  scheduled_at: Date;
  mission_id: string | null;
  outcome: 'started' | 'refused' | 'failed';
  reason: string | null;
  at: CreatedAt;
}

/** A webhook endpoint of an owner (migration 028): the events it takes, its signing secrets, why it was disabled. */
export interface WebhooksTable {
  id: string;
  tenant_id: string;
  user_id: string;
  url: string;
  events: string[];
  description: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** One event owed to one endpoint (migration 028); its `id` is the Standard Webhooks `webhook-id`. */
export interface WebhookDeliveriesTable {
  seq: Generated<string>;
  id: string;
  webhook_id: string;
  source_id: string;
  event_key: string;
  type: string;
  payload: JSONColumnType<Record<string, unknown>>;
  status: ColumnType<'pending' | 'delivered' | 'failed', 'pending' | undefined, 'pending' | 'delivered' | 'failed'>;
  attempts: ColumnType<number, never, number>;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  next_attempt_at: Date | null;
  created_at: CreatedAt;
  pending_since: Timestamp;
  delivered_at: Date | null;
}

/** Append-only conversation rows of a mission; (mission_id, seq) makes appends idempotent under retries. */
export interface MissionMessagesTable {
  mission_id: string;
  seq: number;
  role: string;
  content: JSONColumnType<unknown[]>;
  attempt_scheduled_ms: AttemptScheduledMs;
  created_at: CreatedAt;
}

/** A summary of a mission's transcript before `upto_seq`, written once by the compaction activity; the latest is in use. */
export interface ContextCompactionsTable {
  mission_id: string;
  upto_seq: number;
  summary: string;
  folded_messages: number;
  created_at: CreatedAt;
}

/** The events of a session's runs that continued as new (the latest run's log holds the rest); `seq` is the SSE id. */
export interface MissionEventsTable {
  mission_id: string;
  seq: number;
  event: JSONColumnType<MissionEvent>;
}

/** One tool call's outcome, written by the tool activity, read by the next model call. */
export interface ToolCallsTable {
  mission_id: string;
  /** The turn that asked for the call (0 for calls recorded before turns were stored). */
  turn: number;
  tool_use_id: string;
  tool: string;
  status: string;
  output: ColumnType<unknown, string, string>;
  duration_ms: number;
  attempt: number;
  attempt_scheduled_ms: AttemptScheduledMs;
  created_at: CreatedAt;
}

/** One model call's token usage (per turn and attempt). */
export interface ModelCallsTable {
  mission_id: string;
  call_key: string;
  /** The provider that answered: MODEL_PROVIDER's, or a fallback's (null on rows from before fallbacks). */
  provider: string | null;
  model: string;
  input_tokens: number;
  output_tokens: number;
  stop_reason: string;
  duration_ms: number;
  id: Generated<number>;
  created_at: CreatedAt;
}

/** A user's profile: who the missions work for (company, role, brand voice, free-form preferences). */
export interface ProfilesTable {
  tenant_id: string;
  user_id: string;
  company: string | null;
  role: string | null;
  brand_voice: string | null;
  preferences: ColumnType<Record<string, unknown>, string | undefined, string>;
  updated_at: Timestamp;
}

/** One memory of a user, for one workspace or (workspace_code null) for all of them; `search` is generated. */
export interface MemoriesTable {
  id: string;
  seq: Generated<string>;
  tenant_id: string;
  user_id: string;
  workspace_code: string | null;
  content: string;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  source: string;
  mission_id: string | null;
  source_key: string | null;
  embedding: number[] | null;
  /** The encoder that made `embedding` (migration 023); null when there is none or it predates the column. */
  embedding_model: string | null;
  search: ColumnType<string, never, never>;
  created_at: CreatedAt;
}

/** A user's connection to a provider; only `active` ones open the tools of apps that require that account. */
export interface IntegrationsTable {
  tenant_id: string;
  user_id: string;
  provider: string;
  status: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** One row of the user's feed (tool start/end, mission end); `event_key` makes writes idempotent. */
export interface FeedTable {
  id: Generated<string>;
  tenant_id: string;
  user_id: string;
  mission_id: string;
  event_key: string;
  kind: string;
  tool: string | null;
  tool_use_id: string | null;
  outcome: string | null;
  duration_ms: number | null;
  error: string | null;
  details: NullableJson<Record<string, unknown>>;
  created_at: CreatedAt;
}

/** A tool call that needed a person's approval, from the request to how it ended (migration 017). */
export interface ToolApprovalsTable {
  seq: Generated<string>;
  tenant_id: string;
  user_id: string;
  mission_id: string;
  turn: number;
  tool_use_id: string;
  tool: string;
  input: ColumnType<Record<string, unknown>, string, string>;
  /** `pending`, then how it ended: `approved`, `denied`, `timed_out` or `cancelled`. */
  status: string;
  reason: string | null;
  edited_input: NullableJson<Record<string, unknown>>;
  requested_at: ColumnType<Date, string, string>;
  expires_at: ColumnType<Date, string, string>;
  decided_at: ColumnType<Date | null, string | null | undefined, string | null>;
}

/** A provider key of a user (`scope` user) or of a whole tenant (`scope` tenant, `user_id` ''), encrypted at rest. */
export interface ProviderSecretsTable {
  tenant_id: string;
  scope: 'user' | 'tenant';
  user_id: string;
  provider: string;
  /** Which master key sealed it (rotation re-encrypts rows under older ids). */
  key_id: string;
  nonce: Buffer;
  /** AES-256-GCM ciphertext followed by its 16-byte tag. */
  ciphertext: Buffer;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** An admin's decision for one app in one tenant; no row means the app's `default_enabled`. */
export interface TenantAppsTable {
  tenant_id: string;
  app_id: string;
  enabled: boolean;
  updated_at: Timestamp;
}

/** The tools an app's MCP server listed when a worker last loaded it, or why it could not (`error`). */
export interface McpListingsTable {
  app_id: string;
  /** `[{name, title?, description?, inputSchema}]` as the server described them. */
  tools: ColumnType<unknown, string | undefined, string>;
  error: string | null;
  listed_at: ColumnType<Date, Date | undefined, Date>;
}

/** A tool preview as stored: the tool's fields plus `hash`, the sha256 of its content computed by Cadenza. */
export type StoredPreview = Record<string, unknown> & { hash: string };

/** A vector as stored (memories, skill chunks): the encoder that made it beside it, so two encoders never mix. */
export type StoredVector = { model: string; vector: number[] };

/** One tool invocation's result (an embed): its id is the invocation's, unique across missions (migration 016). */
export interface EmbedsTable {
  id: string;
  mission_id: string;
  tenant_id: string;
  user_id: string;
  turn: number;
  tool_use_id: string;
  tool: string;
  /** processing | finished | error | cancelled */
  status: string;
  /** The tool's data (its result without previews, canvases, follow-ups and instructions); null until it finished. */
  result: ColumnType<unknown, string | null | undefined, string | null>;
  error: string | null;
  previews: ColumnType<StoredPreview[], string | undefined, string>;
  follow_ups: ColumnType<string[], string | undefined, string>;
  instructions: string | null;
  canvas_ids: ColumnType<string[], string | undefined, string>;
  warnings: ColumnType<string[], string | undefined, string>;
  attempt: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  finished_at: Timestamp | null;
}

/** A canvas spec a tool result carried (vega-lite, table, markdown), owner-private (migration 016). */
export interface CanvasesTable {
  id: string;
  embed_id: string;
  mission_id: string;
  tenant_id: string;
  user_id: string;
  /** Its place among the canvases of its embed. */
  position: number;
  type: string;
  title: string;
  spec: ColumnType<unknown, string, string>;
  created_at: CreatedAt;
}

/** A file's bytes, stored once per content: its sha256 is its address (migration 038). */
export interface FileBlobsTable {
  sha256: string;
  bytes: Buffer;
  size: number;
  created_at: CreatedAt;
}

/** A file a mission's tool or script returned, owner-private: one row per (call, name) (migration 038). */
export interface MissionFilesTable {
  id: string;
  mission_id: string;
  tenant_id: string;
  user_id: string;
  tool_use_id: string;
  tool: string;
  name: string;
  media_type: string;
  sha256: string;
  size: number;
  created_at: CreatedAt;
}

export interface Database {
  api_keys: ApiKeysTable;
  skills: SkillsTable;
  skill_versions: SkillVersionsTable;
  skill_bundles: SkillBundlesTable;
  skill_chunks: SkillChunksTable;
  missions: MissionsTable;
  schedules: SchedulesTable;
  schedule_runs: ScheduleRunsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  mission_messages: MissionMessagesTable;
  context_compactions: ContextCompactionsTable;
  mission_events: MissionEventsTable;
  tool_calls: ToolCallsTable;
  model_calls: ModelCallsTable;
  profiles: ProfilesTable;
  memories: MemoriesTable;
  integrations: IntegrationsTable;
  feed: FeedTable;
  provider_secrets: ProviderSecretsTable;
  tenant_apps: TenantAppsTable;
  mcp_listings: McpListingsTable;
  tool_approvals: ToolApprovalsTable;
  embeds: EmbedsTable;
  canvases: CanvasesTable;
  file_blobs: FileBlobsTable;
  mission_files: MissionFilesTable;
  eval_runs: EvalRunsTable;
  eval_results: EvalResultsTable;
}

export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKey = Insertable<ApiKeysTable>;
export type SkillRow = Selectable<SkillsTable>;
export type SkillVersionRow = Selectable<SkillVersionsTable>;
export type MissionRow = Selectable<MissionsTable>;
export type NewMission = Insertable<MissionsTable>;
export type MissionUpdate = Updateable<MissionsTable>;
export type ScheduleRow = Selectable<SchedulesTable>;
export type ScheduleRunRow = Selectable<ScheduleRunsTable>;
export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type ProfileRow = Selectable<ProfilesTable>;
export type MemoryRow = Selectable<MemoriesTable>;
export type IntegrationRow = Selectable<IntegrationsTable>;
export type FeedRow = Selectable<FeedTable>;
export type ProviderSecretRow = Selectable<ProviderSecretsTable>;
export type TenantAppRow = Selectable<TenantAppsTable>;
export type EmbedRow = Selectable<EmbedsTable>;
export type CanvasRow = Selectable<CanvasesTable>;
export type MissionFileRow = Selectable<MissionFilesTable>;

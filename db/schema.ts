import type { ColumnType, Generated, Insertable, JSONColumnType, Selectable, Updateable } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** A jsonb column that may be null; written as JSON text. */
type NullableJson<T> = ColumnType<T | null, string | null, string | null>;

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
}

/** A skill of one owner; versions are immutable rows in skill_versions. */
export interface SkillsTable {
  id: string;
  tenant_id: string;
  owner_id: string;
  name: string;
  description: string;
  active_version: number;
  status: string;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** One immutable version of a skill: the SKILL.md bytes as received plus the parsed frontmatter. */
export interface SkillVersionsTable {
  skill_id: string;
  version: number;
  skill_md: string;
  sha256: string;
  frontmatter: JSONColumnType<Record<string, unknown>>;
  body: string;
  created_at: CreatedAt;
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
  catalog: NullableJson<unknown[]>;
  system_prompt: string | null;
  result: NullableJson<Record<string, unknown>>;
  error: NullableJson<Record<string, unknown>>;
  created_at: CreatedAt;
  updated_at: Timestamp;
  finished_at: Timestamp | null;
}

/** Append-only conversation rows of a mission; (mission_id, seq) makes appends idempotent under retries. */
export interface MissionMessagesTable {
  mission_id: string;
  seq: number;
  role: string;
  content: JSONColumnType<unknown[]>;
  created_at: CreatedAt;
}

/** One tool call's outcome, written by the tool activity, read by the next model call. */
export interface ToolCallsTable {
  mission_id: string;
  tool_use_id: string;
  tool: string;
  status: string;
  output: ColumnType<unknown, string, string>;
  duration_ms: number;
  attempt: number;
  created_at: CreatedAt;
}

/** One model call's token usage (per turn and attempt). */
export interface ModelCallsTable {
  mission_id: string;
  call_key: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  stop_reason: string;
  duration_ms: number;
  id: Generated<number>;
  created_at: CreatedAt;
}

export interface Database {
  api_keys: ApiKeysTable;
  skills: SkillsTable;
  skill_versions: SkillVersionsTable;
  missions: MissionsTable;
  mission_messages: MissionMessagesTable;
  tool_calls: ToolCallsTable;
  model_calls: ModelCallsTable;
}

export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKey = Insertable<ApiKeysTable>;
export type SkillRow = Selectable<SkillsTable>;
export type SkillVersionRow = Selectable<SkillVersionsTable>;
export type MissionRow = Selectable<MissionsTable>;
export type NewMission = Insertable<MissionsTable>;
export type MissionUpdate = Updateable<MissionsTable>;

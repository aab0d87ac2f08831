import { Context } from '@temporalio/activity';
import type { Kysely } from 'kysely';
import { recordToolFeed } from '../db/feed.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import { getBundleBytes } from '../db/skill-bundles.ts';
import { appendVersion, latestVersion } from '../db/skill-versions.ts';
import { findOwnedSkillByName } from '../db/skills.ts';
import { putToolCall } from '../db/transcript.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import { CREATE_SCRIPT } from '../contracts/script-factory.ts';
import { withScriptEntry } from '../script-factory/script-entry.ts';
import { finishEmbed } from './tool-embeds.ts';
import { bundleFiles } from '../skills/bundle.ts';
import { embedChunks } from '../skills/embed-chunks.ts';
import { parseSkillMd } from '../skills/skill-md.ts';
import { newVersion } from '../skills/skill-version.ts';
import { SYSTEM_APP_ID } from '../tools/system/system-tool.ts';
import type { ToolCallResult } from '../contracts/mission.ts';
import type { FactoryOutcome, FactoryPlan } from '../contracts/script-factory.ts';

/** What the factory hands its last activity: the plan (absent when the request was refused) and how it ended. */
export type FactoryFinish = { plan?: FactoryPlan; outcome: FactoryOutcome };

type Call = { mission: MissionRow; input: Record<string, unknown>; owner: { tenantId: string; userId: string } };
type Ids = { missionId: string; turn: number; toolUseId: string; embedId?: string };

/**
 * Stores what the factory made and tells the model: on convergence the script and its frontmatter entry as a new
 * version (a draft awaiting review when the skill is active), the attempts in its audit; otherwise only the record.
 * A retried call finds the version it wrote (same mission, same sha256) and stores nothing twice.
 */
export async function storeFactoryOutcome(
  deps: { db: Kysely<Database>; embeddings: EmbeddingsClient | undefined; logger: Logger },
  call: Call,
  finish: Ids & FactoryFinish,
): Promise<ToolCallResult> {
  const { db } = deps;
  const { outcome, plan } = finish;
  const record = {
    stoppedBy: outcome.stoppedBy,
    attempts: outcome.attempts,
    maxAttempts: outcome.maxAttempts,
    ...(outcome.error ? { error: outcome.error } : {}),
  };
  let reply: { ok: true; result: unknown } | { ok: false; error: string; output: unknown };
  if (outcome.stoppedBy === 'converged' && plan && outcome.source) {
    const stored = await storeVersion(deps, call, finish.toolUseId, plan, outcome.source, record);
    reply =
      typeof stored === 'string'
        ? { ok: false, error: stored, output: { ...record, error: stored } }
        : { ok: true, result: { ...stored, ...record } };
  } else {
    reply = { ok: false, error: failureLine(outcome), output: { ...record, message: failureLine(outcome) } };
  }
  const durationMs = outcome.attempts.reduce((sum, a) => sum + a.modelMs + a.runMs, 0);
  const tool = `${SYSTEM_APP_ID}.${CREATE_SCRIPT}`;
  await putToolCall(db, {
    missionId: finish.missionId,
    turn: finish.turn,
    toolUseId: finish.toolUseId,
    tool,
    status: reply.ok ? 'completed' : 'error',
    output: reply.ok ? reply.result : reply.output,
    durationMs,
    attempt: 1,
    attemptScheduledMs: Context.current().info.currentAttemptScheduledTimestampMs,
  });
  // The call's embed ends like any tool's: the stored answer, or the error.
  const embed = finish.embedId
    ? await finishEmbed(
        db,
        { id: finish.embedId, missionId: finish.missionId, turn: finish.turn, toolUseId: finish.toolUseId, tool },
        reply.ok ? reply : { ok: false, error: reply.error },
        1,
      )
    : undefined;
  const result: ToolCallResult = {
    ...(reply.ok ? { status: 'completed', durationMs } : { status: 'error', durationMs, error: reply.error.slice(0, 300) }),
    ...(embed ? { embed } : {}),
  };
  await recordToolFeed(db, { missionId: finish.missionId, turn: finish.turn, toolUseId: finish.toolUseId, tool }, 'end', result);
  return result;
}

function failureLine(outcome: FactoryOutcome): string {
  const last = outcome.attempts.at(-1)?.error ?? outcome.error ?? 'unknown error';
  const n = outcome.attempts.length;
  switch (outcome.stoppedBy) {
    case 'repeated_error':
      return `no script stored: attempt ${n} failed with the same error as attempt ${n - 1}: ${last}`;
    case 'attempt_limit':
      return `no script stored: all ${n} attempts (FACTORY_MAX_ATTEMPTS) failed; the last: ${last}`;
    default:
      return last;
  }
}

async function storeVersion(
  deps: { db: Kysely<Database>; embeddings: EmbeddingsClient | undefined; logger: Logger },
  call: Call,
  toolUseId: string,
  plan: FactoryPlan,
  source: string,
  record: Record<string, unknown>,
) {
  const { db } = deps;
  const found = await findOwnedSkillByName(db, call.owner, plan.skill);
  if (!found || found.skill.status === 'quarantined') return `skill ${plan.skill} is gone: the script was not stored`;
  const base = found.version;
  const entry = {
    name: plan.script,
    path: plan.path,
    description: String(call.input.description).slice(0, 1024),
    runtime: plan.runtime,
    postconditions: call.input.expected as string[],
  };
  const written = withScriptEntry(base.skill_md, entry);
  if (!written.ok) return written.error;
  const bytes = base.bundle_sha256 ? await getBundleBytes(db, base.bundle_sha256) : undefined;
  const others = (bytes ? await bundleFiles(bytes) : []).filter((f) => f.path !== 'SKILL.md' && f.path !== plan.path);
  const files = [...others, { path: plan.path, data: Buffer.from(source, 'utf8') }];
  const parsed = parseSkillMd(written.skillMd, { files: ['SKILL.md', ...files.map((f) => f.path)] });
  if (!parsed.ok) return `the new version does not read back: ${parsed.errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`;
  const audit = { factory: { missionId: call.mission.id, toolUseId, script: plan.script, ...record } };
  const version = { ...newVersion(written.skillMd, parsed.skill, files, parsed.warnings), missionId: call.mission.id, audit };
  const draft = found.skill.status === 'active';
  const answer = (n: number) => ({
    skill: plan.skill,
    version: n,
    script: plan.script,
    path: plan.path,
    status: draft ? 'draft' : found.skill.status,
    message: draft
      ? `version ${n} of ${plan.skill} holds the script as a draft: the owner reviews and activates it; version ${found.skill.active_version} keeps running`
      : `version ${n} of ${plan.skill} holds the script`,
  });
  // A retried call finds the version it wrote.
  const latest = await latestVersion(db, found.skill.id);
  if (latest && latest.mission_id === call.mission.id && latest.sha256 === version.sha256) return answer(latest.version);
  const row = await appendVersion(
    db,
    call.owner,
    found.skill.id,
    { ...version, chunks: await embedChunks(version.chunks, deps.embeddings, deps.logger) },
    { draft },
  );
  if (!row) return `skill ${plan.skill} is gone: the script was not stored`;
  const stored = draft ? row.draft_version : row.active_version;
  return answer(stored ?? row.active_version);
}

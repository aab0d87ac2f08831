import { getProfile } from '../db/profiles.ts';
import type { MissionRow, ProfileRow } from '../db/schema.ts';
import { retrieveMemories, type RetrievalDeps } from '../memory/retrieve.ts';

const MEMORY_LIMIT = 5;
const MAX_MEMORY_CHARS = 600;

/**
 * The USER CONTEXT section of a mission's system prompt: the owner's profile and the memories retrieved for the
 * objective (this workspace's and the user-wide ones). Built once, by prepareMission, before any tool runs.
 */
export async function buildUserContext(deps: RetrievalDeps, mission: MissionRow): Promise<string> {
  const owner = { tenantId: mission.tenant_id, userId: mission.user_id };
  const [profile, memories] = await Promise.all([
    getProfile(deps.db, owner),
    retrieveMemories(deps, { owner, workspaceCode: mission.workspace_code }, mission.objective, MEMORY_LIMIT),
  ]);
  const lines = ['# USER CONTEXT', '', 'Who you work for and what they have on file. Follow their preferences.', ''];
  lines.push(...profileLines(profile));
  lines.push('', '## Relevant memories', '');
  if (memories.length === 0) lines.push('(none)');
  for (const m of memories) lines.push(`- ${truncate(m.content.replace(/\s+/g, ' ').trim(), MAX_MEMORY_CHARS)}`);
  return lines.join('\n');
}

function profileLines(p: ProfileRow | undefined): string[] {
  const lines = ['## Profile', ''];
  if (p?.company) lines.push(`- Company: ${p.company}`);
  if (p?.role) lines.push(`- Role: ${p.role}`);
  if (p?.brand_voice) lines.push(`- Brand voice: ${p.brand_voice}`);
  for (const [key, value] of Object.entries(p?.preferences ?? {})) {
    lines.push(`- Preference, ${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  if (lines.length === 2) lines.push('(no profile on file)');
  return lines;
}

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

import { getProfile } from '../db/profiles.ts';
import type { MemoryRow, MissionRow, ProfileRow } from '../db/schema.ts';
import { describeAccount, selectContextMemories, type MemoryAccount } from '../memory/context-memories.ts';
import type { RetrievalDeps } from '../memory/retrieve.ts';

const MAX_MEMORY_CHARS = 600;

/**
 * The USER CONTEXT section of a mission's system prompt: the owner's profile and the memories chosen for the
 * objective (this workspace's and the user-wide ones), the user's saved facts apart from the results of earlier
 * missions, with a line saying how many were shown and why the rest were left out. Built by prepareMission before any
 * tool runs, and again as each later exchange of a session starts; the account is returned too, for the mission's row.
 */
export async function buildUserContext(
  deps: RetrievalDeps,
  mission: MissionRow,
  /** The owner's profile when the caller read it already (prepareMission's first statement does), else read here. */
  read?: { profile: ProfileRow | undefined },
): Promise<{ text: string; memories: MemoryAccount }> {
  const owner = { tenantId: mission.tenant_id, userId: mission.user_id };
  const [profile, chosen] = await Promise.all([
    read ? read.profile : getProfile(deps.db, owner),
    selectContextMemories(deps, { owner, workspaceCode: mission.workspace_code }, mission.objective, mission.id),
  ]);
  const lines = ['# USER CONTEXT', '', 'Who you work for and what they have on file. Follow their preferences.', ''];
  lines.push(...profileLines(profile));
  lines.push('', '## Memories', '');
  if (chosen.account.total === 0) lines.push('(none)');
  else lines.push(describeAccount(chosen.account));
  if (chosen.saved.length > 0) lines.push('', '### Saved facts', '', ...memoryLines(chosen.saved));
  if (chosen.missions.length > 0) lines.push('', '### Results of earlier missions', '', ...memoryLines(chosen.missions));
  return { text: lines.join('\n'), memories: chosen.account };
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

const memoryLines = (memories: MemoryRow[]) =>
  memories.map((m) => `- ${truncate(m.content.replace(/\s+/g, ' ').trim(), MAX_MEMORY_CHARS)}`);

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

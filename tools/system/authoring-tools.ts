import { findOwnedSkillByName, createSkill, SkillExistsError } from '../../db/skills.ts';
import { appendVersion } from '../../db/skill-versions.ts';
import { embedChunks } from '../../skills/embed-chunks.ts';
import { closestDuplicate } from '../../skills/near-duplicates.ts';
import { parseSkillMd, type ParsedSkill, type SkillFieldError } from '../../skills/skill-md.ts';
import { newVersion } from '../../skills/skill-version.ts';
import { SKILL_NAME_PATTERN } from '../../contracts/names.ts';
import type { ToolReply } from '../http-executor.ts';
import type { SystemTool, SystemToolContext } from './system-tool.ts';

const owner = (ctx: SystemToolContext) => ({ tenantId: ctx.mission.tenant_id, userId: ctx.mission.user_id });
const skillMdInput = {
  type: 'string',
  minLength: 1,
  maxLength: 100_000,
  description: 'The whole SKILL.md: YAML frontmatter (name, description, allowed-tools, metadata) between --- lines, then the procedure.',
};

/** `create_skill`: writes a new skill of the user from a SKILL.md, strictly checked; it starts as a draft. */
export const createSkillTool: SystemTool = {
  name: 'create_skill',
  description:
    "Creates a new skill for the user from a complete SKILL.md. It is stored as a draft, which the user activates. Every problem comes back naming its field; the result warns when one of the user's skills looks like the same skill (revise that one with update_skill instead).",
  inputSchema: { type: 'object', properties: { skillMd: skillMdInput }, required: ['skillMd'], additionalProperties: false },
  timeoutS: 30,
  async run(input, ctx) {
    const skillMd = String(input.skillMd);
    const parsed = parseStrict(skillMd, ctx);
    if (!parsed.ok) return parsed;
    const { skill, warnings } = parsed;
    const deps = { db: ctx.db, embeddings: ctx.embeddings };
    const duplicate = await closestDuplicate(deps, owner(ctx), skill);
    const version = { ...newVersion(skillMd, skill, [], warnings), missionId: ctx.mission.id };
    try {
      const row = await createSkill(ctx.db, owner(ctx), {
        ...version,
        chunks: await embedChunks(version.chunks, ctx.embeddings, ctx.logger),
        source: 'authored',
        status: 'draft',
      });
      return created({ id: row.id, name: row.name, version: 1 }, warnings, duplicate);
    } catch (err) {
      if (!(err instanceof SkillExistsError)) throw err;
      // A retried call of this tool finds the skill it made: the same answer, nothing stored twice.
      const found = await findOwnedSkillByName(ctx.db, owner(ctx), skill.name);
      if (found?.skill.mission_id === ctx.mission.id && found.version.version === 1 && found.version.sha256 === version.sha256) {
        const others = await closestDuplicate(deps, owner(ctx), skill, found.skill.id);
        return created({ id: found.skill.id, name: found.skill.name, version: 1 }, warnings, others);
      }
      return { ok: false, error: `name: a skill named ${skill.name} already exists; revise it with update_skill, or choose another name` };
    }
  },
};

/** `update_skill`: a new version of one of the user's skills, replacing its SKILL.md whole; never a rename. */
export const updateSkillTool: SystemTool = {
  name: 'update_skill',
  description:
    "Revises one of the user's skills: stores the complete new SKILL.md as its next version (earlier versions are kept). The name in the frontmatter must stay the skill's name.",
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', pattern: SKILL_NAME_PATTERN.source, maxLength: 64, description: 'The skill to revise, e.g. trip-planner.' },
      skillMd: skillMdInput,
    },
    required: ['name', 'skillMd'],
    additionalProperties: false,
  },
  timeoutS: 30,
  async run(input, ctx) {
    const name = String(input.name);
    const skillMd = String(input.skillMd);
    const found = await findOwnedSkillByName(ctx.db, owner(ctx), name);
    if (!found) return { ok: false, error: `there is no skill named ${name}` };
    const parsed = parseStrict(skillMd, ctx);
    if (!parsed.ok) return parsed;
    const { skill, warnings } = parsed;
    if (skill.name !== name)
      return { ok: false, error: `name: a new version may not rename the skill: keep name '${name}' (got '${skill.name}')` };
    const version = { ...newVersion(skillMd, skill, [], warnings), missionId: ctx.mission.id };
    // A retried call of this tool finds the version it wrote as the latest: nothing is appended twice.
    if (found.version.mission_id === ctx.mission.id && found.version.sha256 === version.sha256) {
      return { ok: true, result: { id: found.skill.id, name, version: found.version.version, status: found.skill.status, warnings } };
    }
    const row = await appendVersion(ctx.db, owner(ctx), found.skill.id, {
      ...version,
      chunks: await embedChunks(version.chunks, ctx.embeddings, ctx.logger),
    });
    if (!row) return { ok: false, error: `there is no skill named ${name}` };
    return { ok: true, result: { id: row.id, name, version: row.active_version, status: row.status, warnings } };
  },
};

/** The strict reading authoring uses, every problem named by its field, for the model to fix in one go. */
function parseStrict(
  skillMd: string,
  ctx: SystemToolContext,
): { ok: true; skill: ParsedSkill; warnings: SkillFieldError[] } | { ok: false; error: string } {
  const parsed = parseSkillMd(skillMd, { isInstalled: ctx.isInstalled });
  if (parsed.ok) return parsed;
  return { ok: false, error: `invalid SKILL.md: ${parsed.errors.map((e) => `${e.field}: ${e.message}`).join('; ')}` };
}

function created(
  skill: { id: string; name: string; version: number },
  warnings: SkillFieldError[],
  duplicate: Awaited<ReturnType<typeof closestDuplicate>>,
): ToolReply {
  const nearDuplicate = duplicate && {
    ...duplicate,
    message: `looks like your existing skill ${duplicate.name} (score ${duplicate.score.toFixed(2)}); if it is the same skill, revise ${duplicate.name} with update_skill instead`,
  };
  return { ok: true, result: { ...skill, status: 'draft', warnings, ...(nearDuplicate ? { nearDuplicate } : {}) } };
}

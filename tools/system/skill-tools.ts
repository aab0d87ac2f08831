import { getBundleBytes } from '../../db/skill-bundles.ts';
import { findOwnedSkillByName, getSkillVersion } from '../../db/skills.ts';
import { bundleFiles, decodeUtf8 } from '../../skills/bundle.ts';
import { bundlePathProblem } from '../../skills/bundle-path.ts';
import { SKILL_NAME_PATTERN } from '../../contracts/names.ts';
import type { SystemTool, SystemToolContext } from './system-tool.ts';

const owner = (ctx: SystemToolContext) => ({ tenantId: ctx.mission.tenant_id, userId: ctx.mission.user_id });
// Enough for any reference file a skill should ship; larger ones are cut, and the model is told so.
const MAX_ASSET_CHARS = 200_000;

/** `use_skill`: loads another of the user's active skills (its procedure and file list) into the conversation. */
export const useSkillTool: SystemTool = {
  name: 'use_skill',
  description: "Loads another of the user's active skills by name: returns its procedure to follow and the files of its bundle.",
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', pattern: SKILL_NAME_PATTERN.source, maxLength: 64, description: 'The skill name, e.g. trip-planner.' },
    },
    required: ['name'],
    additionalProperties: false,
  },
  timeoutS: 15,
  async run(input, ctx) {
    const name = String(input.name);
    if (name === ctx.mission.skill_name) return { ok: false, error: `${name} is the skill this mission is already running` };
    const found = await findOwnedSkillByName(ctx.db, owner(ctx), name);
    if (!found || found.skill.status !== 'active') return { ok: false, error: `there is no active skill named ${name}` };
    const { skill, version } = found;
    return {
      ok: true,
      result: {
        name: skill.name,
        version: version.version,
        description: skill.description,
        procedure: version.body,
        files: version.files.map((f) => f.path),
      },
    };
  },
};

/** `read_skill_asset`: one file of the running skill's bundle (a reference, a template, a script's source). */
export const readSkillAssetTool: SystemTool = {
  name: 'read_skill_asset',
  description: "Reads one file of the running skill's bundle by its path inside the skill folder, e.g. references/guide.md.",
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', minLength: 1, maxLength: 255, description: 'Path inside the skill folder, e.g. references/guide.md.' },
    },
    required: ['path'],
    additionalProperties: false,
  },
  timeoutS: 15,
  async run(input, ctx) {
    const path = String(input.path).replace(/^\.\//, '');
    const problem = bundlePathProblem(path);
    if (problem) return { ok: false, error: `path ${JSON.stringify(path)} is not inside the skill folder: ${problem}` };
    const version = await getSkillVersion(ctx.db, ctx.mission.skill_id, ctx.mission.skill_version);
    const bytes = version?.bundle_sha256 ? await getBundleBytes(ctx.db, version.bundle_sha256) : undefined;
    const files = bytes ? await bundleFiles(bytes) : [];
    const file = files.find((f) => f.path === path);
    if (!file) {
      const listing =
        files
          .map((f) => f.path)
          .slice(0, 100)
          .join(', ') || '(none)';
      return { ok: false, error: `no file ${path} in the skill's bundle; its files: ${listing}` };
    }
    const text = decodeUtf8(file.data);
    const content = text ?? file.data.toString('base64');
    return {
      ok: true,
      result: {
        path,
        size: file.data.length,
        encoding: text === undefined ? 'base64' : 'utf-8',
        content: content.slice(0, MAX_ASSET_CHARS),
        ...(content.length > MAX_ASSET_CHARS ? { truncated: true } : {}),
      },
    };
  },
};

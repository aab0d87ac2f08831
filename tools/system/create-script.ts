import { findOwnedSkillByName } from '../../db/skills.ts';
import { SKILL_NAME_PATTERN, TOOL_NAME_PATTERN } from '../../contracts/names.ts';
import { CREATE_SCRIPT } from '../../contracts/script-factory.ts';
import { parsePostcondition } from '../../skill-scripts/postconditions.ts';
import type { Tier } from '../../contracts/model.ts';
import type { SystemTool } from './system-tool.ts';

/** What the request settles of the factory's plan (`FactoryPlan`); the activity adds the limits from the configuration. */
export type FactoryRequest = { skill: string; script: string; path: string; runtime: 'python' | 'node'; tier: Tier };

/**
 * `create_script`: the script factory's front door. The mission workflow runs the factory itself as a child workflow
 * (workflows/script-factory.ts); this tool's `run` is its first step, checking the request against the schema and the
 * user's skill, so every problem comes back to the model before any attempt.
 */
export const createScriptTool: SystemTool = {
  name: CREATE_SCRIPT,
  description:
    "Writes a new script for one of the user's skills and keeps it only when it verifies: each attempt writes the script, runs it in the sandbox on the sample input and checks the expected postconditions, up to a limit of attempts, stopping early when the same error comes back twice. On success the script becomes a new version of the skill (a draft for the owner to review when the skill is active); on failure you get the record of the attempts.",
  inputSchema: {
    type: 'object',
    properties: {
      skill: { type: 'string', pattern: SKILL_NAME_PATTERN.source, maxLength: 64, description: 'The skill the script joins.' },
      name: { type: 'string', pattern: TOOL_NAME_PATTERN.source, description: 'The script name (a-z, 0-9, _), e.g. sum_rows.' },
      description: { type: 'string', minLength: 1, maxLength: 4000, description: 'What the script does with its input.' },
      sample_input: {
        type: ['object', 'array'],
        description: 'A real input to test on: inline JSON, or {"embed": "<id>"} for an earlier tool result.',
      },
      expected: {
        type: 'array',
        minItems: 1,
        maxItems: 20,
        items: { type: 'string', minLength: 1, maxLength: 300 },
        description: 'Postconditions on the JSON output, e.g. ["total == 12", "rows.length > 0"].',
      },
      runtime: { enum: ['python', 'node'], description: 'Default python.' },
    },
    required: ['skill', 'name', 'description', 'sample_input', 'expected'],
    additionalProperties: false,
  },
  timeoutS: 30,
  async run(input, ctx) {
    const skill = String(input.skill);
    const script = String(input.name);
    const expected = input.expected as string[];
    const problems = expected.flatMap((e) => {
      const parsed = parsePostcondition(e);
      return typeof parsed === 'string' ? [`'${e}' ${parsed}`] : [];
    });
    if (problems.length > 0) return { ok: false, error: `expected: ${problems.join('; ')}` };
    const found = await findOwnedSkillByName(ctx.db, { tenantId: ctx.mission.tenant_id, userId: ctx.mission.user_id }, skill);
    if (!found || found.skill.status === 'quarantined')
      return { ok: false, error: `skill: there is no skill named ${skill} to add a script to` };
    if (found.version.spec.scripts.some((s) => s.name === script))
      return { ok: false, error: `name: skill ${skill} already has a script named ${script}; choose another name` };
    const runtime = input.runtime === 'node' ? 'node' : 'python';
    const path = `scripts/${script}.${runtime === 'python' ? 'py' : 'mjs'}`;
    if (found.version.files.some((f) => f.path === path)) return { ok: false, error: `name: ${path} is already a file of skill ${skill}` };
    const request: FactoryRequest = { skill, script, path, runtime, tier: found.version.spec.tier };
    return { ok: true, result: request };
  },
};

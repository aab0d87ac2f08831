import type { ScriptSettings } from '../../config/config.ts';
import { provenanceEntry, recordSkillUse } from '../../db/provenance.ts';
import { recordToolFeed } from '../../db/feed.ts';
import { getBundleBytes } from '../../db/skill-bundles.ts';
import { findOwnedSkillByName, getSkillVersion } from '../../db/skills.ts';
import { putToolCall } from '../../db/transcript.ts';
import type { ScriptCallHandler } from '../../skill-scripts/callback-pipe.ts';
import { findScript } from '../../skill-scripts/declared-scripts.ts';
import { createScriptRunner } from '../../skill-scripts/run-script.ts';
import { bundleFiles } from '../../skills/bundle.ts';
import { SKILL_NAME_PATTERN } from '../../contracts/names.ts';
import { createSystemToolRegistry, SYSTEM_APP_ID, type SystemTool, type SystemToolContext } from './system-tool.ts';

export const RUN_SKILL_SCRIPT = 'run_skill_script';

/**
 * `run_skill_script`: the one way to run a skill's script. The script comes from the active version's stored bundle
 * (the running skill's own version for the running skill), runs in the sandbox, and may call back the allowlisted
 * system tools; each such call is recorded as a tool call and in the feed.
 */
export function createRunSkillScriptTool(settings: ScriptSettings, callable: SystemTool[]): SystemTool {
  const runner = createScriptRunner(settings);
  const allowed = createSystemToolRegistry(callable.filter((t) => settings.toolAllowlist.includes(t.name)));
  const allowedNames = allowed.list().map((t) => t.name);
  return {
    name: RUN_SKILL_SCRIPT,
    description:
      "Runs one of a skill's scripts in a sandbox (no network, no host files) and returns its output: JSON on stdout is the result, other text is returned as text. `args` reaches the script as JSON on stdin; a list is also passed as its command-line arguments.",
    inputSchema: {
      type: 'object',
      properties: {
        skill: { type: 'string', pattern: SKILL_NAME_PATTERN.source, maxLength: 64, description: 'Default: the running skill.' },
        script: { type: 'string', minLength: 1, maxLength: 255, description: 'A declared script name, or a path such as scripts/tool.py.' },
        args: {
          type: ['object', 'array'],
          maxItems: 100,
          items: { type: ['string', 'number', 'boolean'] },
          description: 'Input of the script: an object (JSON on stdin) or a list of command-line arguments.',
        },
      },
      required: ['script'],
      additionalProperties: false,
    },
    // The sandbox's own wall-clock limit ends the run first; the margin covers hydration and clean-up.
    timeoutS: settings.timeoutS + 10,
    async run(input, ctx) {
      const found = await loadVersion(ctx, input.skill === undefined ? ctx.mission.skill_name : String(input.skill));
      if (typeof found === 'string') return { ok: false, error: found };
      const files = found.bundle ? await bundleFiles(found.bundle) : [];
      const script = findScript(
        found.scripts,
        files.map((f) => f.path),
        String(input.script),
      );
      if (typeof script === 'string') return { ok: false, error: script };
      const onCall = recordedCalls(ctx, allowed, allowedNames);
      return runner.run({ files, script, args: input.args ?? {}, signal: ctx.signal, onCall });
    },
  };
}

/** The skill's version to run: the mission's own for the running skill, the active one for another active skill. */
async function loadVersion(ctx: SystemToolContext, name: string) {
  const owner = { tenantId: ctx.mission.tenant_id, userId: ctx.mission.user_id };
  const found = await findOwnedSkillByName(ctx.db, owner, name);
  if (!found || found.skill.status !== 'active') return `there is no active skill named ${name}`;
  const version =
    found.skill.id === ctx.mission.skill_id ? await getSkillVersion(ctx.db, found.skill.id, ctx.mission.skill_version) : found.version;
  if (!version) return `there is no active skill named ${name}`;
  const bundle = version.bundle_sha256 ? await getBundleBytes(ctx.db, version.bundle_sha256) : undefined;
  // Provenance: the exact bytes whose scripts this mission ran (once per version).
  await recordSkillUse(ctx.db, ctx.mission.id, provenanceEntry('script', found.skill, version));
  return { scripts: version.spec.scripts, bundle };
}

/** Answers a script's calls: allowlisted tools run as this mission; every call, refused or not, is recorded. */
function recordedCalls(ctx: SystemToolContext, allowed: ReturnType<typeof createSystemToolRegistry>, names: string[]): ScriptCallHandler {
  return async (call) => {
    const toolUseId = `${ctx.toolUseId ?? RUN_SKILL_SCRIPT}/call-${call.seq}`;
    const tool = `${SYSTEM_APP_ID}.${call.tool}`;
    const feed = { missionId: ctx.mission.id, turn: ctx.turn ?? 0, tool, toolUseId };
    const started = Date.now();
    await recordToolFeed(ctx.db, feed, 'start', undefined, { via: RUN_SKILL_SCRIPT });
    const outcome = allowed.get(tool)
      ? await allowed.run(tool, call.input, { ...ctx, toolUseId })
      : {
          ok: false as const,
          error: `a script may call ${names.length > 0 ? names.join(', ') : 'no tools'} (SCRIPT_TOOL_ALLOWLIST), not ${call.tool}`,
        };
    const durationMs = Date.now() - started;
    await putToolCall(ctx.db, {
      missionId: ctx.mission.id,
      turn: feed.turn,
      toolUseId,
      tool,
      status: outcome.ok ? 'completed' : 'error',
      output: outcome.ok ? outcome.result : outcome.error,
      durationMs,
      attempt: 1,
      attemptScheduledMs: ctx.attemptScheduledMs ?? 0,
    });
    const error = outcome.ok ? undefined : outcome.error.slice(0, 300);
    await recordToolFeed(ctx.db, feed, 'end', { status: outcome.ok ? 'completed' : 'error', durationMs, error });
    return outcome.ok ? { ok: true, result: outcome.result } : { ok: false, error: outcome.error };
  };
}

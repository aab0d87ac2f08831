import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Kysely } from 'kysely';
import { recordToolFeed } from '../db/feed.ts';
import { getMission } from '../db/missions.ts';
import type { Database } from '../db/schema.ts';
import { getBundleBytes } from '../db/skill-bundles.ts';
import { findOwnedSkillByName, getSkillVersion } from '../db/skills.ts';
import { putModelCall, readToolUseInput } from '../db/transcript.ts';
import { CREATE_SCRIPT } from '../contracts/script-factory.ts';
import { buildFactoryPrompt, scriptFromReply } from '../script-factory/factory-prompt.ts';
import { errorKey } from '../script-factory/error-key.ts';
import { resolveSample, type EmbedLookup } from '../script-factory/sample-input.ts';
import { getEmbed, startEmbed } from '../db/embeds.ts';
import { createScriptRunner } from '../skill-scripts/run-script.ts';
import { bundleFiles } from '../skills/bundle.ts';
import type { ZipFile } from '../skills/zip-reader.ts';
import { SYSTEM_APP_ID } from '../tools/system/system-tool.ts';
import type { FactoryRequest } from '../tools/system/create-script.ts';
import type { ToolCallResult } from '../contracts/mission.ts';
import type { FactoryPlan, FactoryPreparation, FactoryRun, FactoryScript, ScriptFactoryInput } from '../contracts/script-factory.ts';
import type { ActivityDeps } from './deps.ts';
import { withHeartbeat } from './heartbeat.ts';
import { answerOnce } from './kept-answer.ts';
import { toFailure } from './model-activity.ts';
import { storeFactoryOutcome, type FactoryFinish } from './factory-outcome.ts';

const TOOL = `${SYSTEM_APP_ID}.${CREATE_SCRIPT}`;
const MODEL_ATTEMPT_TIMEOUT_MS = 180_000;

type CallIds = Pick<ScriptFactoryInput, 'missionId' | 'turn' | 'toolUseId' | 'embedId'>;
/** One attempt's step: the call, the plan and the attempt's number. */
type AttemptInput = CallIds & { plan: FactoryPlan; attempt: number };

/**
 * The script factory's activities: prepare (check the request, resolve the sample), write (one model call on the
 * model queue), run (one sandboxed run on the sample, postconditions checked) and finish (store the version and the
 * call's output). Each reads the call's input from the transcript, so the factory's history holds ids and scripts only.
 */
export function createFactoryActivities(deps: ActivityDeps) {
  const { db, modelClient, model, systemTools, logger, factory } = deps;
  const runner = createScriptRunner(factory.scripts);

  async function readCall({ missionId, turn, toolUseId }: CallIds) {
    const mission = await getMission(db, missionId);
    const input = await readToolUseInput(db, missionId, turn, toolUseId);
    if (!input) throw ApplicationFailure.nonRetryable(`no tool use ${toolUseId} in turn ${turn} of mission ${missionId}`, 'NoToolUse');
    const owner = { tenantId: mission.tenant_id, userId: mission.user_id };
    return { mission, input, owner };
  }

  // An embed's data is the tool's result without its previews, canvases and follow-ups; none until it finished.
  const embeds: EmbedLookup = async (owner, id) => (await getEmbed(db, owner, id))?.result ?? undefined;
  async function sampleOf(call: Awaited<ReturnType<typeof readCall>>) {
    return resolveSample(call.input.sample_input, call.owner, embeds);
  }

  return {
    /** The request checked by the create_script tool, the sample resolved, the limits added; a problem is the model's. */
    async prepareFactory(ids: CallIds): Promise<FactoryPreparation> {
      await recordToolFeed(db, { ...ids, tool: TOOL }, 'start');
      await startEmbed(db, { id: ids.embedId, missionId: ids.missionId, turn: ids.turn, toolUseId: ids.toolUseId, tool: TOOL });
      const call = await readCall(ids);
      const ctx = {
        db,
        mission: call.mission,
        signal: Context.current().cancellationSignal,
        logger,
        toolUseId: ids.toolUseId,
        turn: ids.turn,
      };
      const checked = await systemTools.run(TOOL, call.input, {
        ...ctx,
        registry: deps.registry,
        embeddings: deps.embeddings,
        vectors: deps.vectors,
      });
      if (!checked.ok) return { ok: false, error: checked.error };
      const sample = await sampleOf(call);
      if (!sample.ok) return sample;
      const request = checked.result as FactoryRequest;
      return { ok: true, plan: { ...request, maxAttempts: factory.maxAttempts, runTimeoutS: factory.scripts.timeoutS + 10 } };
    },

    /** One model call (the skill's tier) writing the script from the description, the sample and the previous error. */
    async writeScript(input: AttemptInput & { previous?: { source: string; error: string } }): Promise<FactoryScript> {
      const call = await readCall(input);
      const sample = await sampleOf(call);
      if (!sample.ok) throw ApplicationFailure.nonRetryable(sample.error, 'SampleGone');
      const modelId = model.tiers[input.plan.tier];
      if (!modelId) throw ApplicationFailure.nonRetryable(`unknown model tier ${input.plan.tier}`, 'UnknownTier');
      const prompt = buildFactoryPrompt({
        script: input.plan.script,
        description: String(call.input.description),
        runtime: input.plan.runtime,
        sample: sample.value,
        expected: call.input.expected as string[],
        previous: input.previous,
      });
      // The reply is kept before its usage is stored: a store that meets a database outage is retried, the call is not.
      const { response, durationMs } = await answerOnce(async () => {
        const started = Date.now();
        const response = await withHeartbeat(2_000, (signal) =>
          modelClient
            .complete({
              model: modelId,
              system: prompt.system,
              messages: prompt.messages,
              tools: [],
              maxTokens: model.maxTokens,
              signal: AbortSignal.any([signal, AbortSignal.timeout(MODEL_ATTEMPT_TIMEOUT_MS)]),
            })
            .catch((err: unknown) => {
              throw toFailure(err);
            }),
        );
        return { response, durationMs: Date.now() - started };
      }, logger);
      // Once per attempt: the key names it, so a retried activity writes nothing twice.
      await putModelCall(db, input.missionId, {
        callKey: `factory-${input.turn}-${input.toolUseId}-${input.attempt}`,
        model: response.model,
        inputTokens: response.usage.inputTokens,
        outputTokens: response.usage.outputTokens,
        stopReason: response.stopReason,
        durationMs,
      });
      const text = response.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
      const script = scriptFromReply(text);
      return script.ok ? { ok: true, source: script.source, durationMs } : { ok: false, error: script.error, durationMs };
    },

    /** The script run in the sandbox on the sample, beside the skill's own files; passes only if every check passed. */
    async runFactoryAttempt(input: AttemptInput & { source: string }): Promise<FactoryRun> {
      const call = await readCall(input);
      const sample = await sampleOf(call);
      if (!sample.ok) throw ApplicationFailure.nonRetryable(sample.error, 'SampleGone');
      const { plan } = input;
      const base = await baseFiles(db, call.owner, plan.skill);
      const files = [...base.filter((f) => f.path !== plan.path), { path: plan.path, data: Buffer.from(input.source, 'utf8') }];
      const script = { name: plan.script, path: plan.path, runtime: plan.runtime, postconditions: call.input.expected as string[] };
      const started = Date.now();
      const outcome = await withHeartbeat(1_000, (signal) =>
        runner.run({
          files,
          script,
          args: sample.value,
          signal,
          onCall: async () => ({ ok: false, error: 'a script being written by the factory may call no tools' }),
        }),
      );
      const durationMs = Date.now() - started;
      const error = outcome.ok ? unverified(plan.script, outcome.result) : outcome.error;
      return error === undefined
        ? { ok: true, durationMs }
        : { ok: false, error: error.slice(0, 4000), errorKey: errorKey(error), durationMs };
    },

    /** The factory's end: on success the new version (a draft when the skill is active); always the call's output and feed end. */
    async finishFactory(input: CallIds & FactoryFinish): Promise<ToolCallResult> {
      const call = await readCall(input);
      return storeFactoryOutcome({ db, embeddings: deps.embeddings, logger }, call, input);
    },
  };
}

/** The skill's current files, which the new script runs beside (the active version's bundle). */
async function baseFiles(db: Kysely<Database>, owner: { tenantId: string; userId: string }, skill: string): Promise<ZipFile[]> {
  const found = await findOwnedSkillByName(db, owner, skill);
  if (!found) throw ApplicationFailure.nonRetryable(`skill ${skill} is gone`, 'SkillGone');
  const version = await getSkillVersion(db, found.skill.id, found.skill.active_version);
  const bytes = version?.bundle_sha256 ? await getBundleBytes(db, version.bundle_sha256) : undefined;
  return bytes ? bundleFiles(bytes) : [];
}

/** The runner passes unverifiable postconditions; the factory converges only when every one passed. */
function unverified(script: string, result: unknown): string | undefined {
  const checks = (result as { postconditions?: Array<{ expression: string; status: string; reason?: string }> }).postconditions ?? [];
  const open = checks.filter((c) => c.status !== 'passed');
  if (open.length === 0) return undefined;
  const output = JSON.stringify((result as { output?: unknown }).output) ?? 'null';
  const listing = open.map((c) => `${c.expression} (${c.reason ?? c.status})`).join('; ');
  return `${script} ran but ${open.length} postcondition(s) could not be verified: ${listing}; output: ${output.slice(0, 2000)}`;
}

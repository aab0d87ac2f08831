import { defineSignal } from '@temporalio/workflow';
import type { Tier } from './model.ts';

/** The script factory's vocabulary and its workflow's contract, shared by the workflow, the activities and the fake model server. */

/** The system tool that starts the factory; the mission workflow runs it as a child workflow, never as an activity. */
export const CREATE_SCRIPT = 'create_script';

/** The first words of every factory prompt's system text: how the fake model server tells factory prompts apart. */
export const FACTORY_PROMPT_MARKER = 'You are the Cadenza script factory.';

/** Why the factory stopped: every postcondition passed, the same error twice in a row, or the attempt limit. */
export type FactoryStop = 'converged' | 'repeated_error' | 'attempt_limit';

// ——— The factory's workflow: a child workflow per create_script call, its input and result, its progress signal ———

export const SCRIPT_FACTORY_WORKFLOW = 'scriptFactoryWorkflow';
/** The child workflow of one create_script call (a tool-use id is unique within its turn). */
export const scriptFactoryWorkflowId = (missionId: string, turn: number, toolUseId: string): string =>
  `mission-${missionId}-factory-${turn}-${toolUseId}`;

/** Ids only: the factory's activities read the call's input from the mission's transcript. */
export type ScriptFactoryInput = {
  missionId: string;
  turn: number;
  toolUseId: string;
  modelTaskQueue: string;
  /** The call's embed, which the factory starts and ends. */
  embedId: string;
};

/** What the factory settles once, before its first attempt. */
export type FactoryPlan = {
  skill: string;
  script: string;
  /** The script's path in the bundle (`scripts/<name>.py` or `.mjs`). */
  path: string;
  runtime: 'python' | 'node';
  tier: Tier;
  maxAttempts: number;
  /** How long one sandboxed run may take (SCRIPT_TIMEOUT_S and a margin). */
  runTimeoutS: number;
};
/** What the preparation answers: the plan, or the problem with the request (returned to the model). */
export type FactoryPreparation = { ok: true; plan: FactoryPlan } | { ok: false; error: string };

/** One attempt's script, as the model wrote it (the source stays in the factory's history, capped in size). */
export type FactoryScript = { ok: true; source: string; durationMs: number } | { ok: false; error: string; durationMs: number };
/** One sandboxed run on the sample with the postconditions checked; `errorKey` is the error normalised for comparison. */
export type FactoryRun = { ok: true; durationMs: number } | { ok: false; error: string; errorKey: string; durationMs: number };

/** One attempt as the record keeps it. */
export type FactoryAttempt = { attempt: number; passed: boolean; error?: string; modelMs: number; runMs: number };
/** The factory's end, handed to its last activity; `source` only when it converged. */
export type FactoryOutcome = {
  stoppedBy: FactoryStop | 'invalid';
  attempts: FactoryAttempt[];
  maxAttempts: number;
  source?: string;
  error?: string;
};

/** The child sends the parent one per attempt; the parent logs it as a `tool_attempt` event (durable, replayed). */
export type FactoryProgress = { toolUseId: string; progress: number; total: number; message: string };
export const factoryProgressSignal = defineSignal<[FactoryProgress]>('factoryProgress');

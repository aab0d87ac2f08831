import { randomBytes, randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
export { until } from '../../testkit/until.ts';
import type { AdmissionActivities, MissionActivities } from '../../contracts/activities.ts';
import { createLogger } from '../../lib/logger.ts';
import { installTemporalRuntime } from '../../worker/temporal-runtime.ts';
import { IGNORED_PROGRESS_SINKS } from '../../events/progress-sinks.ts';
import type { ApprovalRecord } from '../../contracts/approvals.ts';
import {
  MISSION_WORKFLOW,
  missionWorkflowId,
  type MissionPlan,
  type MissionResult,
  type MissionResume,
  type ModelTurnInput,
  type ModelTurnResult,
  type ToolCallEnd,
  type ToolCallInput,
  type ToolCallResult,
} from '../../contracts/mission.ts';

/** A model reply for the stub model: a tool-use turn, an answer, or any shape a test needs. */
export const toolTurn = (...names: Array<[id: string, name: string]>): ModelTurnResult => ({
  stopReason: 'tool_use',
  toolUses: names.map(([id, name]) => ({ id, name, input: {} })),
  // The model activity names each call's embed (`embedIdOf`, a UUID); the stub a random one.
  embedIds: names.map(() => randomUUID()),
  text: '',
  inputTokens: 100,
  outputTokens: 10,
  model: 'stub',
  costUsd: 0,
});
export const answer = (text: string, stopReason: ModelTurnResult['stopReason'] = 'end_turn'): ModelTurnResult => ({
  stopReason,
  toolUses: [],
  text,
  inputTokens: 100,
  outputTokens: 10,
  model: 'stub',
  costUsd: 0,
});

export const plan = (over: Partial<MissionPlan> = {}): MissionPlan => ({
  tier: 'allegro',
  maxTurns: 3,
  budget: {},
  approvalTimeoutS: 600,
  tools: [
    { modelName: 'lab__lookup', qualifiedName: 'lab.lookup', timeoutS: 5, retries: 0 },
    { modelName: 'lab__scan', qualifiedName: 'lab.scan', timeoutS: 5, retries: 0 },
  ],
  ...over,
});

/** Scripted stand-ins for the activities, and what the workflow asked of them. */
export type Stubs = {
  plan?: MissionPlan;
  model: (input: ModelTurnInput) => ModelTurnResult | Promise<ModelTurnResult>;
  tool?: (input: ToolCallInput) => ToolCallResult | Promise<ToolCallResult>;
  /** Start as a retry that resumes here. */
  resume?: MissionResume;
  /** The worker's `maxHeartbeatThrottleInterval` (default 200 ms). */
  heartbeatThrottle?: `${number}${'ms' | 's'}`;
};

/**
 * The mission workflow on the dev server the global setup started (`TEMPORAL_ADDRESS`), served by a Worker over the
 * prebuilt bundle with stub activities, on a task queue of its own. Not the time-skipping environment: it downloads
 * a Java test server (no network here), and its update waits do not skip time anyway.
 */
export async function startWorkflowHarness() {
  const address = process.env.TEMPORAL_ADDRESS;
  const codePath = process.env.CADENZA_TEST_BUNDLE;
  if (!address || !codePath) throw new Error('TEMPORAL_ADDRESS or CADENZA_TEST_BUNDLE unset: run the tests through scripts/test.sh');
  // Quiet: the bug test makes the SDK warn about the failing workflow task on purpose.
  installTemporalRuntime(createLogger({ level: 'error' }));
  const env = await TestWorkflowEnvironment.createFromExistingServer({ address });

  async function run<T>(stubs: Stubs, body: (m: MissionRun) => Promise<T>): Promise<T> {
    const taskQueue = `wf-${randomBytes(5).toString('hex')}`;
    const calls = {
      model: [] as ModelTurnInput[],
      tools: [] as ToolCallInput[],
      ends: [] as ToolCallEnd[],
      approvals: [] as ApprovalRecord[],
      failed: [] as unknown[],
      completed: [] as MissionResult[],
    };
    // The script factory's activities are exercised against real services (test/integration/script-factory.test.ts).
    // A session's next exchange finds a free slot (admission is exercised in test/integration/mission-admission.test.ts).
    const admission: Pick<AdmissionActivities, 'retakeSlot'> = { retakeSlot: async () => true };
    const activities: Omit<MissionActivities, 'prepareFactory' | 'writeScript' | 'runFactoryAttempt' | 'finishFactory'> = {
      prepareMission: async () => stubs.plan ?? plan(),
      callModel: async (input) => (calls.model.push(input), stubs.model(input)),
      compactContext: async () => ({ folded: undefined, inputTokens: 0, outputTokens: 0, costUsd: 0 }),
      runTool: async (input) => {
        calls.tools.push(input);
        if (!stubs.tool) throw new Error(`no tool stub for ${input.qualifiedName}`);
        return stubs.tool(input);
      },
      recordToolEnds: async ({ ends }) => void calls.ends.push(...ends),
      recordApproval: async (record) => void calls.approvals.push(record),
      completeMission: async ({ result }) => (calls.completed.push(result), { canvasSpecIds: [], followUps: [] }),
      completeExchange: async () => ({ canvasSpecIds: [], followUps: [] }),
      continueSession: async () => {},
      pauseMission: async () => {},
      storeEvents: async () => {},
      failMission: async (input) => void calls.failed.push(input),
    };
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: { codePath: codePath! },
      activities: { ...activities, ...admission },
      sinks: IGNORED_PROGRESS_SINKS,
      maxHeartbeatThrottleInterval: stubs.heartbeatThrottle ?? '200ms',
    });
    const missionId = randomUUID();
    return worker.runUntil(async () => {
      const handle = await env.client.workflow.start(MISSION_WORKFLOW, {
        taskQueue,
        workflowId: missionWorkflowId(missionId),
        args: [{ missionId, modelTaskQueue: taskQueue, ...(stubs.resume ? { resume: stubs.resume } : {}) }],
      });
      return body({ handle, calls, missionId });
    });
  }
  return { env, run, teardown: () => env.teardown() };
}
type Handle = ReturnType<TestWorkflowEnvironment['client']['workflow']['getHandle']>;
export type MissionRun = {
  handle: Handle;
  missionId: string;
  calls: {
    model: ModelTurnInput[];
    tools: ToolCallInput[];
    ends: ToolCallEnd[];
    approvals: ApprovalRecord[];
    failed: unknown[];
    completed: MissionResult[];
  };
};

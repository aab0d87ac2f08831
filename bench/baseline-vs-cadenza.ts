import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { missionWorkflowId, type MissionResult } from '../contracts/mission.ts';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { createModelClient } from '../model/create-model-client.ts';
import type { TestStack } from '../testkit/test-stack.ts';
import { createBaselineActivities } from './baseline-activities.ts';
import type { BaselineInput } from './baseline-workflow.ts';
import { startBenchStack, startMission } from './bench-kit.ts';
import { fmtMs, log, median, type Row } from './stats.ts';

const BENCH = 'baseline-vs-cadenza';
const TURNS = 8;
const SAMPLES = 3;
const SIZES = [1_000, 100_000];
const noop = () => {};
const quiet = { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };

export type Run = { perTurnMs: number; historyBytes: number; largestPayload: number };

/**
 * Cadenza's design (transcript in Postgres, ids in history) against the usual one (the conversation in workflow
 * history, sent whole to every model activity): TURNS tool turns then an answer, one tool call a turn returning
 * `size` bytes, on the same Temporal server, fake model and tool server.
 */
export async function run(): Promise<Row[]> {
  const rows: Row[] = [];
  const m = (runs: Run[], k: keyof Run) => median(runs.map((r) => r[k]));
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KB`;
  for (const { size, cadenza, usual } of await measure()) {
    rows.push(
      {
        bench: BENCH,
        figure: `${size / 1000} KB results, ${TURNS} turns: per turn, Cadenza · baseline`,
        value: `${fmtMs(m(cadenza, 'perTurnMs'))} · ${fmtMs(m(usual, 'perTurnMs'))}`,
      },
      {
        bench: BENCH,
        figure: `${size / 1000} KB results: history bytes per run, Cadenza · baseline`,
        value: `${kb(m(cadenza, 'historyBytes'))} · ${kb(m(usual, 'historyBytes'))}`,
      },
      {
        bench: BENCH,
        figure: `${size / 1000} KB results: largest payload in history, Cadenza · baseline`,
        value: `${kb(m(cadenza, 'largestPayload'))} · ${kb(m(usual, 'largestPayload'))}`,
      },
    );
  }
  return rows;
}

/** Per result size, the measured runs of each design (the warm-up left out), alternating mission and baseline. */
export async function measure(): Promise<Array<{ size: number; cadenza: Run[]; usual: Run[] }>> {
  const { stack, key } = await startBenchStack({ name: 'versus', tools: ['lab.lookup'], maxTurns: TURNS + 1 });
  const baseline = await startBaselineWorkers(stack);
  try {
    stack.model.setHandler((req) =>
      req.allToolResults.length < TURNS
        ? { reply: { toolUses: [{ name: 'lab__lookup', input: { q: 'x' } }] } }
        : { reply: { text: 'done' } },
    );
    const out: Array<{ size: number; cadenza: Run[]; usual: Run[] }> = [];
    for (const size of SIZES) {
      stack.tools.on('lookup', () => ({ body: { data: 'x'.repeat(size - 12) } }));
      const cadenza: Run[] = [];
      const usual: Run[] = [];
      for (let i = 0; i <= SAMPLES; i++) {
        const c = await runMission(stack, baseline.client, key, `${size}-${i}`);
        const b = await runBaseline(baseline.client, baseline.taskQueue, `${size}-${i}`);
        if (i === 0) continue; // warm-up
        cadenza.push(c);
        usual.push(b);
      }
      log(BENCH, `${SAMPLES} runs each at ${size / 1000} KB tool results`);
      out.push({ size, cadenza, usual });
    }
    return out;
  } finally {
    await baseline.stop();
    await stack.stop();
  }
}

async function runMission(stack: TestStack, client: Client, key: string, tag: string): Promise<Run> {
  const t0 = performance.now();
  const id = await startMission(stack, key, 'versus', `versus ${tag}`);
  const handle = client.workflow.getHandle<() => Promise<MissionResult>>(missionWorkflowId(id));
  const result = await handle.result();
  if (result.metrics.toolCalls !== TURNS) throw new Error(`mission made ${result.metrics.toolCalls} tool calls, expected ${TURNS}`);
  return { perTurnMs: (performance.now() - t0) / TURNS, ...(await historySize(handle)) };
}

async function runBaseline(client: Client, taskQueue: string, tag: string): Promise<Run> {
  const input: BaselineInput = { objective: `versus ${tag}`, maxTurns: TURNS + 1, modelTaskQueue: `${taskQueue}-model` };
  const t0 = performance.now();
  const handle = await client.workflow.start('baselineWorkflow', {
    taskQueue,
    workflowId: `baseline-${taskQueue}-${tag}`,
    args: [input],
  });
  const turns = await handle.result();
  if (turns !== TURNS + 1) throw new Error(`baseline ran ${turns} turns, expected ${TURNS + 1}`);
  return { perTurnMs: (performance.now() - t0) / TURNS, ...(await historySize(handle)) };
}

/** The run's history as the server stores it (protobuf bytes), and its largest single payload. */
async function historySize(handle: Pick<WorkflowHandle, 'fetchHistory'>): Promise<Pick<Run, 'historyBytes' | 'largestPayload'>> {
  const history = await handle.fetchHistory();
  const historyBytes = proto.temporal.api.history.v1.History.encode(history).finish().length;
  let largestPayload = 0;
  for (const e of history.events ?? []) {
    const payloads = [
      ...(e.activityTaskScheduledEventAttributes?.input?.payloads ?? []),
      ...(e.activityTaskCompletedEventAttributes?.result?.payloads ?? []),
    ];
    for (const p of payloads) largestPayload = Math.max(largestPayload, p.data?.length ?? 0);
  }
  return { historyBytes, largestPayload };
}

/** The baseline's workers (workflow + tools, and model calls on a queue of their own, as a mission has). */
async function startBaselineWorkers(stack: TestStack) {
  const taskQueue = `bench-baseline-${randomBytes(4).toString('hex')}`;
  const connection = await NativeConnection.connect({ address: stack.env.TEMPORAL_ADDRESS! });
  // A client of the bench's own, without the API's deadlines, and able to receive a baseline's multi-MB history.
  const clientConnection = await Connection.connect({
    address: stack.env.TEMPORAL_ADDRESS!,
    channelArgs: { 'grpc.max_receive_message_length': 256 * 1024 * 1024 },
  });
  const client = new Client({ connection: clientConnection });
  const workflowsPath = fileURLToPath(new URL('./baseline-workflow.ts', import.meta.url));
  const workflowBundle = await bundleWorkflowCode({ workflowsPath, logger: quiet });
  const modelId = stack.config.model.tiers.allegro!;
  const { callModel, runTool } = createBaselineActivities({
    modelClient: createModelClient(stack.config.model),
    model: modelId,
    toolsUrl: stack.tools.url,
    tools: ['lab__lookup'],
  });
  const workers = [
    await Worker.create({ connection, taskQueue, workflowBundle, activities: { runTool } }),
    await Worker.create({ connection, taskQueue: `${taskQueue}-model`, activities: { callModel } }),
  ];
  const running = Promise.all(workers.map((w) => w.run()));
  return {
    taskQueue,
    client,
    async stop() {
      workers.forEach((w) => w.shutdown());
      await running;
      await connection.close();
      await clientConnection.close();
    },
  };
}

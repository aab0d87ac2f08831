import { proxyActivities } from '@temporalio/workflow';
import type { BareActivities } from './bare-activities.ts';

/** Input of the bare workflow: how many tool turns, and the queue its model-like activities run on. */
export type BareInput = { turns: number; modelTaskQueue: string };

const store = proxyActivities<BareActivities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 1 } });

/**
 * The mission's activity pattern with nothing behind it: prepare, `turns` × (model, tool), one answering model
 * call, complete. The same activity count and the same two task queues as a mission, and trivial bodies, so a
 * mission's time over this one's is what Cadenza itself adds.
 */
export async function bareWorkflow(input: BareInput): Promise<number> {
  const { model } = proxyActivities<BareActivities>({
    taskQueue: input.modelTaskQueue,
    startToCloseTimeout: '30s',
    retry: { maximumAttempts: 1 },
  });
  await store.prepare(input.turns);
  for (let turn = 1; turn <= input.turns; turn++) {
    await model(turn);
    await store.tool(turn);
  }
  await model(input.turns + 1);
  await store.complete(input.turns);
  return input.turns;
}

import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import { missionWorkflowId } from '../contracts/mission.ts';
import type { SseFrame } from './api-client.ts';
import type { TestStack } from './test-stack.ts';
import { until } from './until.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a mission's JSON, as the API client gives it
type Mission = any;

/** One run of a mission's workflow chain (a session continues as new between exchanges). */
export type MissionRun = { runId: string; status: string; historyLength: number; historySize: number };

/** Every run of the mission's workflow id that Temporal's visibility lists, oldest first. */
export async function missionRuns(temporal: Client, missionId: string): Promise<MissionRun[]> {
  const runs: Array<MissionRun & { started: number }> = [];
  for await (const run of temporal.workflow.list({ query: `WorkflowId = '${missionWorkflowId(missionId)}'` })) {
    const { runId, historyLength } = run;
    runs.push({ runId, status: run.status.name, historyLength, historySize: run.historySize ?? 0, started: run.startTime.getTime() });
  }
  return runs.sort((a, b) => a.started - b.started).map(({ started: _, ...run }) => run);
}

/** Sends a message and waits until the session answered it: idle with `exchanges` answered. */
export async function exchange(stack: TestStack, key: string, id: string, text: string, exchanges: number): Promise<Mission> {
  const sent = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: { text } });
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  return idleAfter(stack, key, id, exchanges);
}

/** Waits until the session is idle with `exchanges` answered. */
export async function idleAfter(stack: TestStack, key: string, id: string, exchanges: number): Promise<Mission> {
  let last: Mission;
  const done = async () => {
    last = (await stack.api.getMission(key, id)).body;
    return last.status === 'idle' && last.exchanges?.length === exchanges;
  };
  await until(done, { timeoutMs: 60_000, everyMs: 20, what: `exchange ${exchanges} answered` });
  return last;
}

/** The seqs of the mission events among `frames`, checked dense from `from + 1`. */
export function denseSeqs(frames: SseFrame[], from = 0): number[] {
  const seqs = frames.flatMap((f) => (f.id !== undefined ? [Number(f.id)] : []));
  assert.deepEqual(
    seqs,
    seqs.map((_, i) => from + i + 1),
    'no gap, no repeat',
  );
  return seqs;
}

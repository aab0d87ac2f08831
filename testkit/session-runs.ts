import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
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

/**
 * Follows a session's stream from its start: `idle(n)` waits for its n-th `idle` status (exchange n answered and
 * recorded), `exchange(text, n)` sends a message and waits for exchange n; `reading` is the whole stream once it ended.
 */
export function followSession(stack: TestStack, key: string, id: string) {
  let idles = 0;
  const reading = stack.api.readEvents(key, id, {
    onFrame: (f) => {
      if (f.event === 'status' && (JSON.parse(f.data!) as { status: string }).status === 'idle') idles += 1;
    },
  });
  const idle = (n: number) =>
    until(() => idles >= n, { timeoutMs: 60_000, everyMs: 5 }).catch(async () => {
      const { status, exchanges, error } = (await stack.api.getMission(key, id)).body as Mission;
      throw new Error(`exchange ${n} not answered: ${JSON.stringify({ status, exchanges: exchanges?.length, error, idles })}`);
    });
  return {
    reading,
    idle,
    /** Sends a message as a client would: again with the same idempotency key while the API answers 503. */
    async exchange(text: string, n: number): Promise<void> {
      const body = { text, idempotencyKey: randomUUID() };
      let sent = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body });
      for (let tries = 1; sent.status === 503 && tries < 5; tries++)
        sent = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body });
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
      await idle(n);
    },
    /** GET /missions/:id once exchange `n` shows there too. */
    async mission(n: number): Promise<Mission> {
      let last: Mission;
      await until(async () => (last = (await stack.api.getMission(key, id)).body).exchanges?.length === n, { timeoutMs: 30_000 });
      return last;
    },
  };
}

/** The statuses of the mission's runs, oldest first, once Temporal's visibility (a little behind) shows `expected`. */
export async function chainOf(temporal: Client, missionId: string, expected: string[]): Promise<MissionRun[]> {
  let runs: MissionRun[] = [];
  const shown = async () => (runs = await missionRuns(temporal, missionId)).map((r) => r.status).join() === expected.join();
  await until(shown, { timeoutMs: 15_000, everyMs: 200 }).catch(() => {});
  assert.deepEqual(
    runs.map((r) => r.status),
    expected,
    'the runs of the chain',
  );
  return runs;
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

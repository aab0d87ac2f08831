import type { SseFrame } from '../testkit/api-client.ts';
import { skillMd, startTestStack, type StackOptions, type TestStack } from '../testkit/test-stack.ts';
import { ServiceError } from '@temporalio/client';
import type { MissionEvent } from '../contracts/events.ts';
import type { MissionResult } from '../contracts/mission.ts';

/** A test stack (fresh database, own task queues, fake model, tool server, worker, API) with a key and one skill. */
export async function startBenchStack(
  skill: { name: string; tools: string[]; maxTurns: number },
  env: Record<string, string> = {},
  opts: Omit<StackOptions, 'env'> = {},
) {
  const stack = await startTestStack({ env, ...opts });
  const key = await stack.api.newKey();
  await stack.api.createSkill(key, skillMd(skill));
  return { stack, key };
}

/**
 * What a bench's measurement needs of a stack: the API's client, the fake model, the tool server and a Temporal handle
 * per mission. The test stack (the API and the worker in this process) has it, and so has split-stack.ts's
 * production shape (each in an OS process of its own).
 */
export type BenchStack = Pick<TestStack, 'api' | 'model' | 'tools' | 'handle'>;

/** Starts a mission through the API and resolves with its id once the POST returned. */
export async function startMission(stack: BenchStack, key: string, skill: string, objective: string): Promise<string> {
  return (await stack.api.startMission(key, { skill, objective })).id;
}

/** One event as an SSE client saw it: the event and the client's clock when its frame was parsed. */
export type Received = { event: MissionEvent; receivedAt: number };

/**
 * Follows a mission's SSE stream in the background, stamping each event with the client clock on arrival;
 * `next(pred)` resolves with the first received event matching `pred` (already received or still to come).
 */
export function watchEvents(stack: BenchStack, key: string, missionId: string) {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  let connectedAt: number | undefined;
  const onFrame = (f: SseFrame) => {
    const now = Date.now();
    if (f.comment === 'connected') connectedAt ??= now;
    if (f.id === undefined || f.data === undefined) return;
    received.push({ event: JSON.parse(f.data) as MissionEvent, receivedAt: now });
    waiters.forEach((w) => w());
  };
  let ended = false;
  const done = stack.api.readEvents(key, missionId, { onFrame }).finally(() => {
    ended = true;
    waiters.forEach((w) => w());
  });
  // A stream that breaks before its caller awaits `done` (which still rejects for it) must not end the process.
  done.catch(() => {});
  return {
    received,
    done,
    connectedAt: () => connectedAt,
    next(pred: (e: MissionEvent) => boolean): Promise<Received> {
      return new Promise((ok, fail) => {
        const check = () => {
          const hit = received.find((r) => pred(r.event));
          if (hit) return void (waiters.delete(check), ok(hit));
          if (ended) return void (waiters.delete(check), fail(new Error(`SSE stream of ${missionId} ended without the awaited event`)));
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/**
 * A mission's result, waited for as long as it takes. The stack's client is the API's, whose every call has a 5 s
 * deadline (`temporal/connection.ts`): a result's long poll on a mission that runs longer under load ends with
 * DEADLINE_EXCEEDED, and is asked again.
 */
export async function missionResult(stack: BenchStack, id: string): Promise<MissionResult> {
  for (;;) {
    try {
      return await stack.handle(id).result();
    } catch (err) {
      if (!(err instanceof ServiceError) || !/DEADLINE_EXCEEDED/.test(String(err.cause))) throw err;
    }
  }
}

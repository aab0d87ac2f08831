import type { TestStack } from './test-stack.ts';
import type { ToolServer } from './tool-server.ts';
import type { FakeModelServer, StepHandler } from '../fake-model/fake-model-types.ts';

/** The tokens the scripted model reports for every reply: a mission's metrics must count them once per request made. */
export const REPLY_USAGE = { inputTokens: 1_000, outputTokens: 10 };

/**
 * A model that answers by what it is shown, not by a queue: asked about `<name>` with no tool results yet it calls
 * `lab__scan` once (tool-use id `tu_<name>`), shown the result it answers `done <name>`. A call repeated after an
 * outage gets the same answer. Every reply reports `REPLY_USAGE`.
 */
export function scanThenAnswer(delayMs: number): StepHandler {
  return (req) => {
    const name = /Mission ([\w-]+)/.exec(JSON.stringify(req.messages))?.[1] ?? 'unknown';
    if (req.allToolResults.length === 0)
      return { reply: { toolUses: [{ id: `tu_${name}`, name: 'lab__scan', input: { target: name } }], usage: REPLY_USAGE }, delayMs };
    return { reply: { text: `done ${name}`, usage: REPLY_USAGE }, delayMs };
  };
}

export function useScanThenAnswer(model: FakeModelServer, delayMs: number): void {
  model.setHandler(scanThenAnswer(delayMs));
}

/** The requests the fake model server received for the mission whose objective is `Mission <name>`. */
export function modelRequestsOf(model: FakeModelServer, name: string) {
  const objective = new RegExp(`Mission ${name}\\b`);
  return model.requests.filter((r) => objective.test(JSON.stringify(r.messages)));
}

/** The requests the tool server received with `{target: name}` or `{q: name}` (each mission's own tool call). */
export function toolRequestsOf(tools: ToolServer, name: string) {
  return tools.requests.filter((r) => r.input.target === name || r.input.q === name);
}

/**
 * Polls GET /missions/:id until it answers 200 with a status other than `running`. Answers other than 200 (the
 * API may answer 5xx while its database is away) are counted, not taken for the mission's end.
 */
export async function waitForMissionEnd(stack: TestStack, key: string, id: string, timeoutMs = 240_000) {
  const deadline = Date.now() + timeoutMs;
  let errors = 0;
  for (;;) {
    const res = await stack.api.getMission(key, id).catch(() => undefined);
    if (res?.status === 200 && res.body.status !== 'running') return { mission: res.body, errors };
    if (res?.status !== 200) errors++;
    if (Date.now() > deadline) throw new Error(`mission ${id} did not end within ${timeoutMs} ms (last answer ${res?.status})`);
    await new Promise((ok) => setTimeout(ok, 250));
  }
}

/** The attempt numbers of every completed or failed activity of a mission, by activity type (from the history). */
export async function activityAttempts(stack: TestStack, missionId: string): Promise<Record<string, number[]>> {
  const history = await stack.handle(missionId).fetchHistory();
  const types = new Map<number, string>();
  const out: Record<string, number[]> = {};
  for (const e of history.events ?? []) {
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled) types.set(Number(e.eventId), scheduled.activityType?.name ?? '?');
    const started = e.activityTaskStartedEventAttributes;
    if (started) {
      const type = types.get(Number(started.scheduledEventId)) ?? '?';
      (out[type] ??= []).push(started.attempt ?? 0);
    }
  }
  return out;
}

/** Resolves once the mission's pending activity of that type runs attempt `n` or a later one (failed attempts reach the history only with the last). */
export async function waitForPendingAttempt(stack: TestStack, missionId: string, type: string, n: number, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { raw } = await stack.handle(missionId).describe();
    const pending = raw.pendingActivities?.find((a) => a.activityType?.name === type);
    if ((pending?.attempt ?? 0) >= n) return;
    if (Date.now() > deadline) throw new Error(`${type} of mission ${missionId} did not reach attempt ${n} within ${timeoutMs} ms`);
    await new Promise((ok) => setTimeout(ok, 250));
  }
}

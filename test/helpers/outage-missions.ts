import type { TestStack } from './test-stack.ts';
import type { FakeModelServer, StepHandler } from '../../fake-model/fake-model-types.ts';

/**
 * A model that answers by what it is shown, not by a queue: asked about `<name>` with no tool results yet it calls
 * `lab__scan` once (tool-use id `tu_<name>`), shown the result it answers `done <name>`. A call repeated after an
 * outage gets the same answer.
 */
export function scanThenAnswer(delayMs: number): StepHandler {
  return (req) => {
    const name = /Mission ([\w-]+)/.exec(JSON.stringify(req.messages))?.[1] ?? 'unknown';
    if (req.allToolResults.length === 0)
      return { reply: { toolUses: [{ id: `tu_${name}`, name: 'lab__scan', input: { target: name } }] }, delayMs };
    return { reply: { text: `done ${name}` }, delayMs };
  };
}

export function useScanThenAnswer(model: FakeModelServer, delayMs: number): void {
  model.setHandler(scanThenAnswer(delayMs));
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

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ToolRequest } from '../../testkit/tool-server.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

/** The most tool requests that were open at one instant. */
function peakOverlap(requests: ToolRequest[]): number {
  const edges = requests.flatMap((r) => [
    [r.startedAt, 1],
    [r.endedAt ?? Infinity, -1],
  ]);
  edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let peak = 0;
  for (const [, d] of edges) peak = Math.max(peak, (open += d!));
  return peak;
}

describe('tool calls on their own task queue (TOOL_CONCURRENCY slots per worker)', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { TOOL_CONCURRENCY: '2' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'looker', tools: ['lab.lookup'], maxTurns: 2 }));
  });
  after(() => stack.stop());

  it('runs tools on the tool queue, never more than TOOL_CONCURRENCY at once, and every mission completes', async () => {
    stack.tools.on('lookup', () => ({ delayMs: 400, body: { hit: 'found' } }));
    stack.model.setHandler((req) =>
      req.toolResults.length > 0
        ? { reply: { text: 'done' } }
        : { reply: { toolUses: [{ name: 'lab__lookup', input: { q: req.lastUserText.slice(0, 20) } }] } },
    );
    const ids = await Promise.all(
      Array.from({ length: 5 }, (_, i) => stack.api.startMission(key, { skill: 'looker', objective: `look ${i}` })),
    );
    const missions = await Promise.all(ids.map(({ id }) => stack.api.waitForEnd(key, id)));
    assert.deepEqual(
      missions.map((m) => m.status),
      Array(5).fill('completed'),
    );
    assert.equal(stack.tools.requests.length, 5);
    assert.equal(peakOverlap(stack.tools.requests), 2, 'two tool slots, both used, never exceeded');
    const { events } = await stack.handle(ids[0]!.id).fetchHistory();
    const queues = events!
      .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool')
      .map((e) => e.activityTaskScheduledEventAttributes!.taskQueue!.name);
    assert.deepEqual(queues, [stack.config.temporal.toolTaskQueue]);
  });
});

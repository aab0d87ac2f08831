import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

// GET /missions/:id when no worker answers the workflow's query: the view Postgres holds must name what the live
// view names, each tool call's embed among it.
describe('a mission read from Postgres when no worker answers', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'looker', tools: ['lab.lookup'], maxTurns: 3 }));
  });
  after(() => stack.stop());

  it('shows each tool call with its embed id, as the live view did', async () => {
    stack.tools.on('lookup', () => ({ body: { answer: 42 } }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_pg', name: 'lab__lookup', input: { q: 'x' } }] } }, { reply: { text: 'Done.' } });
    const { id } = await stack.api.startMission(key, { skill: 'looker', objective: 'Look it up.' });
    const live = await stack.api.waitForEnd(key, id);
    assert.equal(live.status, 'completed');
    const liveTool = live.tools.find((t: { toolUseId: string }) => t.toolUseId === 'tu_pg');
    assert.ok(liveTool?.embedId, 'the live view names the embed');

    await stack.worker!.stop();
    const res = await stack.api.request('GET', `/api/v1/missions/${id}`, { key });
    assert.equal(res.status, 200);
    const stored = res.body as { status: string; tools: Array<{ toolUseId: string; name: string; status: string; embedId?: string }> };
    assert.equal(stored.status, 'completed');
    const tool = stored.tools.find((t) => t.toolUseId === 'tu_pg');
    assert.deepEqual(
      { name: tool?.name, status: tool?.status, embedId: tool?.embedId },
      { name: liveTool.name, status: liveTool.status, embedId: liveTool.embedId },
    );
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

/** The tool call's activity as the server holds it while it runs: when it last recorded a heartbeat, if ever. */
async function lastBeat(stack: TestStack, missionId: string): Promise<number | undefined> {
  const d = await stack.handle(missionId).describe();
  const tool = (d.raw.pendingActivities ?? []).find((p) => p.activityType?.name === 'runTool');
  assert.ok(tool, 'the tool call is running');
  return tool.lastHeartbeatTime ? Number(tool.lastHeartbeatTime.seconds) * 1000 + (tool.lastHeartbeatTime.nanos ?? 0) / 1e6 : undefined;
}

// A heartbeat the server records is a write and, on Temporal Cloud, a billed action: a call that ends within its
// first beat interval (2 s) records none.
describe('heartbeats', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.scan'], maxTurns: 2 }));
  });
  after(() => stack.stop());

  it('a tool call records no heartbeat before its first interval, then one every 2 s', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_scan', name: 'lab__scan', input: { target: 't' } }] } }, { reply: { text: 'x' } });
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Scan.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan'));
    await new Promise((ok) => setTimeout(ok, 500));
    assert.equal(await lastBeat(stack, id), undefined, 'no heartbeat recorded in the call’s first half second');
    await new Promise((ok) => setTimeout(ok, 2_500));
    assert.ok((await lastBeat(stack, id)) !== undefined, 'the 2 s beat is recorded: a dead worker or a cancel is still seen');
    await stack.handle(id).cancel();
  });
});

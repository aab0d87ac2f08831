import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { endToolCall } from '../../db/tool-call-records.ts';
import { putReplyAndCall, putToolCall } from '../../db/transcript.ts';

/**
 * A transcript row is what the workflow acted on: an activity attempt that stalls and writes late (a timed-out attempt
 * still running beside its retry, a model call an interrupt replaced) cannot replace what a later attempt wrote.
 */
describe('transcript writes of late attempts', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'latecomer', tools: ['lab.lookup'], maxTurns: 3 }));
  });
  after(() => stack.stop());

  /** A finished mission of one tool turn and an answer. */
  async function oneToolTurn() {
    stack.tools.on('lookup', () => ({ body: { found: 'the real answer' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_late', name: 'lab__lookup', input: { q: 'x' } }] } },
      { reply: { text: 'Found it.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'latecomer', objective: 'Look it up.' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    return id;
  }

  const messageAt = (id: string, seq: number) =>
    stack.db
      .selectFrom('mission_messages')
      .select(['content', 'attempt_scheduled_ms'])
      .where('mission_id', '=', id)
      .where('seq', '=', seq)
      .executeTakeFirstOrThrow();
  const toolCall = (id: string) =>
    stack.db
      .selectFrom('tool_calls')
      .select(['output', 'attempt', 'attempt_scheduled_ms'])
      .where('mission_id', '=', id)
      .executeTakeFirstOrThrow();

  it('every row names when the attempt that wrote it was scheduled', async () => {
    const id = await oneToolTurn();
    const started = Date.now() - 60_000;
    for (const seq of [0, 1, 2, 3]) assert.ok(Number((await messageAt(id, seq)).attempt_scheduled_ms) > started, `message ${seq}`);
    assert.ok(Number((await toolCall(id)).attempt_scheduled_ms) > started, 'the tool call');
  });

  it('a late reply from an earlier attempt leaves the later one’s; a later attempt’s replaces it', async () => {
    const id = await oneToolTurn();
    const held = await messageAt(id, 1);
    const call = { callKey: 'turn-1', model: 'fake', inputTokens: 1, outputTokens: 1, stopReason: 'tool_use', durationMs: 1 };
    const stale = { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'a reply nobody acted on' }] };
    await putReplyAndCall(stack.db, id, 1, stale, call, Number(held.attempt_scheduled_ms) - 1_000);
    assert.deepEqual((await messageAt(id, 1)).content, held.content, 'the earlier attempt’s late write changed nothing');

    const later = { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'a retried attempt’s reply' }] };
    await putReplyAndCall(stack.db, id, 1, later, call, Number(held.attempt_scheduled_ms) + 1_000);
    assert.deepEqual((await messageAt(id, 1)).content, later.content, 'a later attempt rewrites the position');
  });

  it('a late tool output from an earlier attempt leaves the later one’s, through either write', async () => {
    const id = await oneToolTurn();
    const held = await toolCall(id);
    const at = Number(held.attempt_scheduled_ms);
    const mission = await stack.db.selectFrom('missions').select(['tenant_id', 'user_id']).where('id', '=', id).executeTakeFirstOrThrow();
    const embed = await stack.db.selectFrom('embeds').select('id').where('mission_id', '=', id).executeTakeFirstOrThrow();
    const key = { missionId: id, turn: 1, toolUseId: 'tu_late', tool: 'lab.lookup' };
    await endToolCall(stack.db, { tenantId: mission.tenant_id, userId: mission.user_id }, key, {
      output: { status: 'completed', json: '{"found":"stale"}', durationMs: 1, attempt: 1, attemptScheduledMs: at - 1_000 },
      embed: { call: { ...key, id: embed.id }, end: { status: 'finished' } },
      feed: { status: 'completed', durationMs: 1 },
    });
    await putToolCall(stack.db, {
      ...key,
      status: 'completed',
      output: { found: 'stale' },
      durationMs: 1,
      attempt: 1,
      attemptScheduledMs: at - 1,
    });
    assert.deepEqual((await toolCall(id)).output, held.output, 'the earlier attempt’s late writes changed nothing');

    await putToolCall(stack.db, {
      ...key,
      status: 'completed',
      output: { found: 'retried' },
      durationMs: 1,
      attempt: 2,
      attemptScheduledMs: at + 1_000,
    });
    assert.deepEqual((await toolCall(id)).output, { found: 'retried' }, 'a later attempt rewrites the output');
  });
});

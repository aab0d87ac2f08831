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

  const embedOf = (id: string, toolUseId: string) =>
    stack.db
      .selectFrom('embeds')
      .select(['id', 'status'])
      .where('mission_id', '=', id)
      .where('tool_use_id', '=', toolUseId)
      .executeTakeFirst();
  const feedStartOf = (id: string, turn: number, toolUseId: string) =>
    stack.db.selectFrom('feed').select('kind').where('event_key', '=', `${id}/tool/${turn}/${toolUseId}/start`).executeTakeFirst();

  it('a late reply from an earlier attempt leaves the later one’s, and starts no call; a later attempt’s replaces it', async () => {
    const id = await oneToolTurn();
    const held = await messageAt(id, 1);
    const at = Number(held.attempt_scheduled_ms);
    const mission = await stack.db.selectFrom('missions').select(['tenant_id', 'user_id']).where('id', '=', id).executeTakeFirstOrThrow();
    const owner = { tenantId: mission.tenant_id, userId: mission.user_id };
    const starting = (turn: number, toolUseIds: string[]) => ({
      owner,
      turn,
      calls: toolUseIds.map((toolUseId) => ({ id: `embed-${id}-${toolUseId}`, missionId: id, turn, toolUseId, tool: 'lab.lookup' })),
      toolUseIds,
    });
    const call = { callKey: 'turn-1', model: 'fake', inputTokens: 1, outputTokens: 1, stopReason: 'tool_use', durationMs: 1 };
    // As if mid-turn: an ended mission starts nothing (checked last).
    await stack.db.updateTable('missions').set({ finished_at: null }).where('id', '=', id).execute();
    const text = (t: string) => ({ role: 'assistant' as const, content: [{ type: 'text' as const, text: t }] });

    // A later attempt (or the call an interrupt started again) replaces the reply, starts its calls, and removes the
    // start of a tool use the earlier one returned and it does not.
    await putReplyAndCall(stack.db, id, 1, text('first try'), call, at + 1_000, undefined, starting(1, ['tu_a']));
    assert.equal((await embedOf(id, 'tu_a'))?.status, 'processing', 'a started call’s embed is processing');
    assert.equal((await feedStartOf(id, 1, 'tu_a'))?.kind, 'tool_start', 'and its feed start is written');
    await putReplyAndCall(stack.db, id, 1, text('a retried attempt’s reply'), call, at + 2_000, undefined, starting(1, ['tu_new']));
    assert.deepEqual((await messageAt(id, 1)).content, text('a retried attempt’s reply').content, 'a later attempt rewrites the position');
    assert.equal((await embedOf(id, 'tu_new'))?.status, 'processing');
    assert.equal(await embedOf(id, 'tu_a'), undefined, 'the replaced reply’s call never runs: its start is removed');
    assert.equal(await feedStartOf(id, 1, 'tu_a'), undefined);
    assert.equal((await embedOf(id, 'tu_late'))?.status, 'finished', 'a call that ended keeps its embed');

    // An earlier attempt writing late changes nothing: neither the reply, nor the calls started, nor its own.
    await putReplyAndCall(stack.db, id, 1, text('a reply nobody acted on'), call, at - 1_000, undefined, starting(1, ['tu_stale']));
    assert.deepEqual((await messageAt(id, 1)).content, text('a retried attempt’s reply').content, 'the late write changed nothing');
    assert.equal(await embedOf(id, 'tu_stale'), undefined, 'nor started its call');
    assert.equal(await feedStartOf(id, 1, 'tu_stale'), undefined);
    assert.equal((await embedOf(id, 'tu_new'))?.status, 'processing', 'nor removed the later attempt’s');

    // The next model call (here the final one, as when the budget ends a mission) finds tu_new never ran: its rows go.
    await putReplyAndCall(stack.db, id, 3, text('final'), { ...call, callKey: 'turn-2' }, Date.now() + 60_000, undefined, starting(2, []));
    assert.equal(await embedOf(id, 'tu_new'), undefined, 'a start no call ran is removed at the next call');
    assert.equal(await feedStartOf(id, 1, 'tu_new'), undefined);
    assert.equal((await embedOf(id, 'tu_late'))?.status, 'finished');

    // A reply stored once the mission ended (its attempt was cancelled while storing) starts nothing.
    await stack.db.updateTable('missions').set({ finished_at: new Date() }).where('id', '=', id).execute();
    await putReplyAndCall(
      stack.db,
      id,
      5,
      text('too late'),
      { ...call, callKey: 'turn-3' },
      Date.now() + 70_000,
      undefined,
      starting(3, ['tu_after']),
    );
    assert.equal(await embedOf(id, 'tu_after'), undefined, 'an ended mission starts no call');
    assert.equal(await feedStartOf(id, 3, 'tu_after'), undefined);
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

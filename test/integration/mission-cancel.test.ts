import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { createToolCancels } from '../../notify/tool-cancels.ts';

describe('cancellation', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.lookup', 'lab.scan'], maxTurns: 4 }));
  });
  after(() => stack.stop());

  it('cancels one tool call through the API while the other finishes, and the mission goes on', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.tools.on('lookup', () => ({ delayMs: 1_500, body: { hit: 'found it' } }));
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_scan', name: 'lab__scan', input: { target: 'big' } },
            { id: 'tu_look', name: 'lab__lookup', input: { q: 'q' } },
          ],
        },
      },
      { reply: { text: 'Done without the scan.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Scan and look up.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan'));

    const cancel = await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_scan/cancel`, { key });
    assert.equal(cancel.status, 202);
    const mission = await stack.api.waitForEnd(key, id);

    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.text, 'Done without the scan.');
    const statuses = Object.fromEntries(mission.tools.map((t: { toolUseId: string; status: string }) => [t.toolUseId, t.status]));
    assert.deepEqual(statuses, { tu_scan: 'cancelled', tu_look: 'completed' });
    const results = stack.model.requests[1]!.toolResults;
    assert.deepEqual(
      results.map((r) => r.toolUseId),
      ['tu_scan', 'tu_look'],
      'results in the order the model asked',
    );
    assert.ok(results[0]!.isError && /cancelled/.test(results[0]!.content), 'the model sees cancelled for exactly that id');
    assert.ok(!results[1]!.isError && /found it/.test(results[1]!.content));
    const scan = stack.tools.requests.find((r) => r.tool === 'scan')!;
    await stack.tools.waitFor(() => scan.endedAt !== undefined);
    assert.equal(scan.aborted, true, 'the tool server saw its request aborted');

    const again = await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_scan/cancel`, { key });
    assert.equal(again.status, 409);
    const unknown = await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_nope/cancel`, { key });
    assert.equal(unknown.status, 404);
  });

  it('a tool cancel aborts the tool at once (announced to the worker) and is still recorded by Temporal as cancelled', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_fast', name: 'lab__scan', input: { target: 'x' } }] } }, { reply: { text: 'ok' } });
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Cancel fast.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan' && r.input.target === 'x'));
    const scan = stack.tools.requests.find((r) => r.tool === 'scan' && r.input.target === 'x')!;
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_fast/cancel`, { key })).status, 202);
    await stack.tools.waitFor(() => scan.endedAt !== undefined);
    assert.equal(scan.aborted, true, 'the tool server saw its request aborted');
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.tools[0].status, 'cancelled');
    const events = (await stack.handle(id).fetchHistory()).events ?? [];
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityId === 'tool-1-tu_fast')!;
    const ofCall = (e: (typeof events)[number]) =>
      [
        e.activityTaskCancelRequestedEventAttributes,
        e.activityTaskCanceledEventAttributes,
        e.activityTaskCompletedEventAttributes,
        e.activityTaskFailedEventAttributes,
      ].some((a) => a?.scheduledEventId?.toString() === scheduled.eventId?.toString());
    const kinds = events.filter(ofCall).map((e) => Object.keys(e).find((k) => k.startsWith('activityTask'))!);
    assert.deepEqual(
      kinds,
      ['activityTaskCancelRequestedEventAttributes', 'activityTaskCanceledEventAttributes'],
      'Temporal records the cancel',
    );
    const feed = await stack.db
      .selectFrom('feed')
      .select(['kind', 'outcome'])
      .where('mission_id', '=', id)
      .where('tool_use_id', '=', 'tu_fast')
      .execute();
    assert.deepEqual(feed.map((f) => [f.kind, f.outcome]).sort(), [
      ['tool_end', 'cancelled'],
      ['tool_start', null],
    ]);
  });

  it('a tool stopped by a cancel announcement whose Update never comes ends as an error the model sees, not after its timeout', async () => {
    // The API announces a cancel before its Update; here the Update never follows (as when the API dies in between).
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_lone', name: 'lab__scan', input: { target: 'lone' } }] } },
      { reply: { text: 'coped' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Lose the update.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.tool === 'scan' && r.input.target === 'lone'));
    const scan = stack.tools.requests.find((r) => r.tool === 'scan' && r.input.target === 'lone')!;
    await createToolCancels(stack.notifications, { listen: false }).announce(id, 'tu_lone');
    await stack.tools.waitFor(() => scan.endedAt !== undefined);
    assert.equal(scan.aborted, true, 'the announcement alone stops the tool');
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.tools[0].status, 'error');
    const result = stack.model.requests.at(-1)!.toolResults[0]!;
    assert.ok(result.isError);
    assert.match(result.content, /never confirmed/);
  });

  it('cancels the whole mission: the running tool is aborted and the run ends CANCELLED', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    const modelCallsBefore = stack.model.requests.length;
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_s2', name: 'lab__scan', input: { target: 'all' } }] } });
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Scan forever.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.input.target === 'all'));

    const cancel = await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key });
    assert.equal(cancel.status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'cancelled');

    const description = await stack.handle(id).describe();
    assert.equal(description.status.name, 'CANCELLED');
    const scan = stack.tools.requests.find((r) => r.input.target === 'all')!;
    await stack.tools.waitFor(() => scan.endedAt !== undefined);
    assert.equal(scan.aborted, true);
    const row = await stack.db
      .selectFrom('missions')
      .select(['status', 'error', 'final_events'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(row.status, 'cancelled');
    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    assert.deepEqual(events.at(-1), { ...events.at(-1), type: 'status', status: 'cancelled' });
    assert.deepEqual(
      row.final_events,
      events.slice(-2),
      'the recorded cancellation holds the error and the terminal event the stream ends with',
    );
    assert.equal(stack.model.requests.length - modelCallsBefore, 1, 'no model call after the cancel');
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key })).status, 409);
  });

  it('cancelling the mission while two slow tools run ends both as cancelled: in GET, on SSE before the end, in the feed', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.tools.on('lookup', () => ({ hang: true }));
    stack.model.enqueue({
      reply: {
        toolUses: [
          { id: 'tu_slow1', name: 'lab__scan', input: { target: 'slow-1' } },
          { id: 'tu_slow2', name: 'lab__lookup', input: { q: 'slow-2' } },
        ],
      },
    });
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Two slow tools.' });
    await stack.tools.waitFor(
      () => stack.tools.requests.some((r) => r.input.target === 'slow-1') && stack.tools.requests.some((r) => r.input.q === 'slow-2'),
    );
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key })).status, 202);
    const mission = await stack.api.waitForEnd(key, id);

    assert.equal(mission.status, 'cancelled');
    assert.deepEqual(
      mission.tools.map((t: { toolUseId: string; status: string }) => [t.toolUseId, t.status]),
      [
        ['tu_slow1', 'cancelled'],
        ['tu_slow2', 'cancelled'],
      ],
    );
    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    const ends = events.filter((e) => e.type === 'tool_end');
    assert.deepEqual(ends.map((e) => [e.toolUseId, e.status]).sort(), [
      ['tu_slow1', 'cancelled'],
      ['tu_slow2', 'cancelled'],
    ]);
    const terminal = events.findIndex((e) => e.type === 'status' && e.status === 'cancelled');
    assert.ok(
      events.every((e, i) => e.type !== 'tool_end' || i < terminal),
      'every tool_end comes before the terminal event',
    );
    const feed = await stack.api.request('GET', `/api/v1/activity?missionId=${id}`, { key });
    const toolEnds = feed.body.items.filter((a: { kind: string }) => a.kind === 'tool_end');
    assert.deepEqual(toolEnds.map((a: { toolUseId: string; outcome: string }) => [a.toolUseId, a.outcome]).sort(), [
      ['tu_slow1', 'cancelled'],
      ['tu_slow2', 'cancelled'],
    ]);
  });

  it('cancelling the mission during a model call aborts the HTTP request to the model', async () => {
    const before = stack.model.requests.length;
    stack.model.enqueue({ hang: true });
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Think forever.' });
    await stack.model.waitFor(() => stack.model.requests.length > before);
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key })).status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'cancelled');
    const call = stack.model.requests[before]!;
    await stack.model.waitFor(() => call.aborted);
    assert.equal(call.aborted, true, 'the model server saw the request aborted');
    assert.equal(stack.model.requests.length, before + 1, 'and it was not retried');
  });

  it('tells apart two tool calls with the same id in different turns (servers that reuse ids)', async () => {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.tools.on('lookup', () => ({ body: { hit: 'first' } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'call_0', name: 'lab__lookup', input: { q: 'one' } }] } },
      { reply: { toolUses: [{ id: 'call_0', name: 'lab__scan', input: { target: 'reused' } }] } },
      { reply: { text: 'both turns done' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Reuse ids.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.input.target === 'reused'));
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/tools/call_0/cancel`, { key })).status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.deepEqual(
      mission.tools.map((t: { name: string; status: string }) => [t.name, t.status]),
      [
        ['lab.lookup', 'completed'],
        ['lab.scan', 'cancelled'],
      ],
    );
  });

  it('keeps the tool outputs of different turns apart when a server reuses a tool-call id', async () => {
    stack.tools.on('lookup', () => ({ body: { hit: 'output of turn one' } }));
    const before = stack.model.requests.length;
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'call_7', name: 'lab__lookup', input: { q: 'one' } }] } },
      { reply: { toolUses: [{ id: 'call_7', name: 'lab__ghost', input: {} }] } },
      { reply: { text: 'done' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Reuse an id for a failing call.' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    const [turn2, turn3] = [stack.model.requests[before + 1]!, stack.model.requests[before + 2]!];
    assert.match(turn2.toolResults[0]!.content, /output of turn one/);
    assert.ok(turn3.toolResults[0]!.isError);
    assert.match(turn3.toolResults[0]!.content, /unknown tool lab__ghost/, 'turn two is answered with its own outcome');
    const rows = await stack.db.selectFrom('tool_calls').select(['turn', 'tool_use_id']).where('mission_id', '=', id).execute();
    assert.deepEqual(rows, [{ turn: 1, tool_use_id: 'call_7' }]);
  });
});

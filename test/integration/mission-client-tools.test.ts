import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MissionEvent } from '../../contracts/events.ts';
import { missionWorkflowId } from '../../contracts/mission.ts';
import type { RecordedRequest, Step } from '../../fake-model/fake-model-types.ts';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import { spawnWorker } from '../helpers/worker-process.ts';

const SKILL = skillMd({ name: 'desk-work', tools: ['desk.*', 'lab.lookup'], maxTurns: 3 });
type Call = { id: string; name: string; input: Record<string, unknown> };

/** The first turn makes `calls`; the next one answers with every result it got. */
const callThenQuote =
  (...calls: Call[]) =>
  (r: RecordedRequest): Step =>
    r.toolResults.length === 0
      ? { reply: { toolUses: calls } }
      : { reply: { text: `Got: ${r.toolResults.map((t) => `${t.toolUseId}=${t.isError ? 'ERROR ' : ''}${t.content}`).join(' | ')}` } };
const clientCalls = (events: MissionEvent[]) =>
  events.filter((e): e is Extract<MissionEvent, { type: 'client_tool_call' }> => e.type === 'client_tool_call');

/** The helpers of one stack: the call's status, the result route, the mission's history length. */
function helpers(stack: () => TestStack, key: () => string) {
  const toolStatus = async (id: string, toolUseId: string, k = key()) =>
    ((await stack().api.getMission(k, id)).body.tools as Array<{ toolUseId: string; status: string }> | undefined)?.find(
      (t) => t.toolUseId === toolUseId,
    )?.status;
  return {
    toolStatus,
    // The call waits from its start (the wait begins in the same workflow task as its `tool_start`).
    waiting: (id: string, toolUseId: string) =>
      until(async () => (await toolStatus(id, toolUseId)) === 'running', { what: `${toolUseId} waiting`, timeoutMs: 60_000 }),
    send: (id: string, toolUseId: string, body: unknown, k = key()) =>
      stack().api.request('POST', `/api/v1/missions/${id}/tools/${toolUseId}/result`, { key: k, body }),
    historyLength: async (id: string) =>
      ((await stack().temporal.workflow.getHandle(missionWorkflowId(id)).fetchHistory()).events ?? []).length,
  };
}

describe('tools the caller runs (runs: client)', () => {
  let stack: TestStack;
  let key: string;
  const h = helpers(
    () => stack,
    () => key,
  );
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, SKILL);
  });
  after(() => stack.stop());

  it('waits for the result with no activity held while its HTTP sibling runs; the result reaches the model', async () => {
    stack.model.setHandler(
      callThenQuote(
        { id: 'tu_ask', name: 'desk__ask_user', input: { question: 'Which city?' } },
        { id: 'tu_http', name: 'lab__lookup', input: { q: 'x' } },
      ),
    );
    const { id } = await stack.api.startMission(key, { skill: 'desk-work', objective: 'Ask the user.' });
    await h.waiting(id, 'tu_ask');
    await until(async () => (await h.toolStatus(id, 'tu_http')) === 'completed', { what: 'the HTTP sibling completed' });
    const described = await stack.temporal.workflow.getHandle(missionWorkflowId(id)).describe();
    assert.equal(described.raw.pendingActivities?.length ?? 0, 0, 'the wait holds no activity');
    assert.equal((await stack.api.getMission(key, id)).body.status, 'running');

    const sent = await h.send(id, 'tu_ask', { output: { city: 'Lisbon' } });
    assert.deepEqual([sent.status, sent.body], [200, { toolUseId: 'tu_ask', status: 'completed' }]);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.match(mission.result.text, /tu_ask=.*Lisbon/);
    assert.match(mission.result.text, /tu_http=(?!ERROR)/);
    assert.deepEqual(
      mission.tools.map((t: { toolUseId: string; name: string; status: string }) => [t.toolUseId, t.name, t.status]),
      [
        ['tu_ask', 'desk.ask_user', 'completed'],
        ['tu_http', 'lab.lookup', 'completed'],
      ],
    );
    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    const [announced] = clientCalls(events);
    assert.deepEqual([announced?.toolUseId, announced?.tool, announced?.input], ['tu_ask', 'desk.ask_user', { question: 'Which city?' }]);
    assert.ok(Date.parse(announced!.deadline) - Date.parse(announced!.at) >= 299_000, 'the default deadline: 300 s');
    const end = events.find((e) => e.type === 'tool_end' && e.toolUseId === 'tu_ask');
    assert.equal(end?.type === 'tool_end' && end.status, 'completed');
  });

  it('refuses a call that is not waiting with 409 (404 when unknown), writing no history', async () => {
    stack.model.setHandler(
      callThenQuote(
        { id: 'tu_wait', name: 'desk__ask_user', input: { question: 'Ready?' } },
        { id: 'tu_h2', name: 'lab__lookup', input: { q: 'y' } },
      ),
    );
    const { id } = await stack.api.startMission(key, { skill: 'desk-work', objective: 'Ask again.' });
    await h.waiting(id, 'tu_wait');
    await until(async () => (await h.toolStatus(id, 'tu_h2')) === 'completed', { what: 'the HTTP sibling completed' });
    const before = await h.historyLength(id);
    const http = await h.send(id, 'tu_h2', { output: 'mine' });
    assert.equal(http.status, 409, 'an HTTP tool call waits for no result');
    assert.match(http.body.error.message, /not waiting/);
    assert.equal((await h.send(id, 'tu_nope', { output: 1 })).status, 404);
    assert.equal(await h.historyLength(id), before, 'refused results wrote no history');

    assert.equal((await h.send(id, 'tu_wait', { error: 'the user walked away' })).status, 200);
    const again = await h.send(id, 'tu_wait', { output: 'late' });
    assert.equal(again.status, 409, 'answered already');
    const mission = await stack.api.waitForEnd(key, id);
    assert.match(mission.result.text, /tu_wait=ERROR .*the user walked away/);
    assert.equal((await h.send(id, 'tu_wait', { output: 'after the end' })).status, 409);
  });

  it("checks an output against the tool's output_schema: 400 naming the field; a bad body is a 400 too", async () => {
    stack.model.setHandler(callThenQuote({ id: 'tu_color', name: 'desk__pick_color', input: { hint: 'sky' } }));
    const { id } = await stack.api.startMission(key, { skill: 'desk-work', objective: 'Pick a color.' });
    await h.waiting(id, 'tu_color');
    const wrong = await h.send(id, 'tu_color', { output: { color: 'purple' } });
    assert.equal(wrong.status, 400);
    assert.deepEqual(
      wrong.body.error.details.fields.map((f: { field: string }) => f.field),
      ['output.color'],
    );
    const missing = await h.send(id, 'tu_color', { output: {} });
    assert.equal(missing.status, 400);
    assert.match(missing.body.error.message, /output\.color/);
    assert.equal((await h.send(id, 'tu_color', {})).status, 400, 'neither output nor error');
    assert.equal((await h.send(id, 'tu_color', { output: { color: 'red' }, error: 'x' })).status, 400, 'both');
    assert.equal((await h.toolStatus(id, 'tu_color')) === 'running', true, 'still waiting after the refusals');

    assert.equal((await h.send(id, 'tu_color', { output: { color: 'blue' } })).status, 200);
    const mission = await stack.api.waitForEnd(key, id);
    assert.match(mission.result.text, /tu_color=.*blue/);
  });

  it('a call past its deadline ends as an error the model sees', async () => {
    stack.model.setHandler(callThenQuote({ id: 'tu_quick', name: 'desk__quick_confirm', input: {} }));
    const { id } = await stack.api.startMission(key, { skill: 'desk-work', objective: 'Confirm quickly.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.tools[0].status, 'error');
    assert.match(mission.result.text, /tu_quick=ERROR .*no result from the caller within 2 s/);
    assert.equal((await h.send(id, 'tu_quick', { output: 'too late' })).status, 409);
  });

  it('the per-tool cancel ends a waiting call; the mission goes on', async () => {
    stack.model.setHandler(callThenQuote({ id: 'tu_cancel', name: 'desk__ask_user', input: { question: 'Still there?' } }));
    const { id } = await stack.api.startMission(key, { skill: 'desk-work', objective: 'Ask and give up.' });
    await h.waiting(id, 'tu_cancel');
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_cancel/cancel`, { key })).status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.tools[0].status, 'cancelled');
    assert.match(mission.result.text, /tu_cancel=ERROR .*cancelled/);
    assert.equal((await h.send(id, 'tu_cancel', { output: 'here' })).status, 409);
  });

  it("someone else's mission is a 404", async () => {
    stack.model.setHandler(callThenQuote({ id: 'tu_mine', name: 'desk__ask_user', input: { question: 'Yours?' } }));
    const { id } = await stack.api.startMission(key, { skill: 'desk-work', objective: 'Ask mine.' });
    await h.waiting(id, 'tu_mine');
    const other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'someone-else' });
    assert.equal((await h.send(id, 'tu_mine', { output: 'theirs' }, other)).status, 404);
    assert.equal(await h.toolStatus(id, 'tu_mine'), 'running', 'still waiting for its owner');
    assert.equal((await h.send(id, 'tu_mine', { output: 'mine' })).status, 200);
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
  });
});

describe('a client tool across a worker’s death (SIGKILL)', () => {
  let stack: TestStack;
  let key: string;
  const h = helpers(
    () => stack,
    () => key,
  );
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, SKILL);
  });
  after(() => stack.stop());

  it('a worker killed while the call waits loses nothing: the result sent later reaches the model once', async () => {
    stack.model.setHandler(callThenQuote({ id: 'tu_k', name: 'desk__ask_user', input: { question: 'Survive?' } }));
    const first = await spawnWorker(stack.env);
    const { id } = await stack.api.startMission(key, { skill: 'desk-work', objective: 'Ask across a crash.' });
    await h.waiting(id, 'tu_k');
    assert.notEqual(await first.kill('SIGKILL'), 0);
    const second = await spawnWorker(stack.env);
    try {
      // The new worker takes the mission over once the dead one's sticky queue times out: until a worker answers, the
      // API says 503 (the result may still take effect), and a client sends again, as this one does.
      let sent = await h.send(id, 'tu_k', { output: 'survived' });
      let unavailable = 0;
      while (sent.status === 503 && unavailable++ < 10) {
        await new Promise((ok) => setTimeout(ok, 1_000));
        sent = await h.send(id, 'tu_k', { output: 'survived' });
      }
      // After a 503 the first may have been taken: the call then waits no more (409); never twice, as checked below.
      assert.ok(sent.status === 200 || (unavailable > 0 && sent.status === 409), `status ${sent.status}`);
      const mission = await stack.api.waitForEnd(key, id);
      assert.equal(mission.status, 'completed');
      assert.match(mission.result.text, /tu_k=.*survived/);
      assert.equal(stack.model.requests.filter((r) => r.toolResults.length > 0).length, 1, 'the model got the result once');
      const events = eventsOf((await stack.api.readEvents(key, id)).frames);
      assert.equal(clientCalls(events).length, 1, 'one wait, announced once');
    } finally {
      await second.kill('SIGTERM');
    }
  });
});

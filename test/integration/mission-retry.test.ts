import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const usage = { inputTokens: 100, outputTokens: 10 };

describe('retrying a failed mission from its last complete turn', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'retrier', tools: ['lab.lookup'], maxTurns: 6 }));
  });
  after(() => stack.stop());

  const retry = (id: string, body: Record<string, unknown> = {}, k = key) =>
    stack.api.request('POST', `/api/v1/missions/${id}/retry`, { key: k, body });
  const lookups = () => stack.tools.requests.filter((r) => r.tool === 'lookup').length;

  /** A mission whose turns 1 and 2 each call lab.lookup, and whose turn 3 the model refuses with a permanent 400. */
  async function failOnTurnThree(tag: string) {
    const [model, tools] = [stack.model.requests.length, lookups()];
    stack.model.enqueue(
      { reply: { toolUses: [{ id: `${tag}_1`, name: 'lab__lookup', input: { q: `${tag} one` } }], usage } },
      { reply: { toolUses: [{ id: `${tag}_2`, name: 'lab__lookup', input: { q: `${tag} two` } }], usage } },
      { status: 400, message: 'messages: bad block' },
    );
    const { id } = await stack.api.startMission(key, { skill: 'retrier', objective: `Look things up (${tag}).` });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'failed');
    assert.equal(mission.error.phase, 'model');
    assert.equal(stack.model.requests.length - model, 3, 'three model calls: two tool turns and the refused one');
    assert.equal(lookups() - tools, 2);
    return id;
  }

  it('goes on at turn 3: turns 1 and 2 are neither asked of the model nor their tools called again', async () => {
    const failed = await failOnTurnThree('a');
    const [model, tools] = [stack.model.requests.length, lookups()];
    stack.model.enqueue({ reply: { text: 'Found it on the retry.', usage } });
    const res = await retry(failed);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.retryOf, failed);
    const mission = await stack.api.waitForEnd(key, res.body.id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.text, 'Found it on the retry.');
    assert.equal(stack.model.requests.length - model, 1, 'only turn 3 asks the model');
    assert.equal(lookups() - tools, 0, 'no tool of turns 1-2 runs again');
    // Turn 3 reads the carried transcript: objective, both tool turns and their results, in place.
    const turn3 = stack.model.requests.at(-1)!;
    assert.equal(turn3.messages.length, 5);
    assert.deepEqual(
      turn3.allToolResults.map((r) => r.toolUseId),
      ['a_1', 'a_2'],
    );
    assert.match(turn3.toolResults[0]!.content, /a two/);
    // Budgets count the first run: three turns, two tool calls, every turn's tokens.
    assert.equal(mission.result.metrics.turns, 3);
    assert.equal(mission.result.metrics.toolCalls, 2);
    assert.equal(mission.result.metrics.inputTokens, 300);
    assert.equal(mission.result.metrics.outputTokens, 30);

    const events = eventsOf((await stack.api.readEvents(key, res.body.id)).frames);
    assert.deepEqual(events[0], { ...events[0], type: 'status', status: 'running', resumed: { retryOf: failed, turn: 3 } });
    assert.deepEqual(
      events.filter((e) => e.type === 'turn').map((e) => e.turn),
      [3],
    );
    const old = await stack.api.getMission(key, failed);
    assert.equal(old.body.retriedBy, res.body.id);
    assert.equal(mission.retryOf, failed);

    // The Web UI: the memo and the search attribute name the retried mission.
    const description = await stack.handle(res.body.id).describe();
    assert.equal(description.memo?.retryOf, failed);
    assert.deepEqual(description.searchAttributes.CadenzaRetryOf, [failed]);
    // The feed: the retry's first row links it to the mission it retries.
    const feed = await stack.api.request('GET', `/api/v1/activity?missionId=${res.body.id}`, { key });
    const link = feed.body.items.find((i: { kind: string }) => i.kind === 'mission_retry');
    assert.deepEqual(link.details, { retryOf: failed, resumedAtTurn: 3 });

    const again = await retry(failed);
    assert.equal(again.status, 409, 'a mission is retried once');
    assert.match(again.body.error.message, new RegExp(res.body.id));
  });

  it('with fromTurn 2 carries turn 1 only: turn 2 and its tool run again', async () => {
    const failed = await failOnTurnThree('b');
    const [model, tools] = [stack.model.requests.length, lookups()];
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'b_2r', name: 'lab__lookup', input: { q: 'b two again' } }], usage } },
      { reply: { text: 'Done from turn 2.', usage } },
    );
    const res = await retry(failed, { fromTurn: 2 });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const mission = await stack.api.waitForEnd(key, res.body.id);
    assert.equal(mission.status, 'completed');
    assert.equal(stack.model.requests.length - model, 2, 'turns 2 and 3');
    assert.equal(lookups() - tools, 1, "turn 2's tool only");
    assert.deepEqual(
      stack.model.requests.at(-2)!.allToolResults.map((r) => r.toolUseId),
      ['b_1'],
      'turn 2 reads the carried result of turn 1',
    );
    assert.equal(mission.result.metrics.turns, 3);
    assert.equal(mission.result.metrics.toolCalls, 2);
  });

  it('refuses a fromTurn past the last complete turn (422 naming fromTurn), and changes nothing', async () => {
    const failed = await failOnTurnThree('c');
    const res = await retry(failed, { fromTurn: 4 });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.error.details.fields, [{ field: 'fromTurn', message: 'at most 3' }]);
    assert.equal((await stack.api.getMission(key, failed)).body.retriedBy, undefined);
  });

  it('the same idempotency key gives the same new mission', async () => {
    const failed = await failOnTurnThree('d');
    stack.model.enqueue({ reply: { text: 'once', usage } });
    const first = await retry(failed, { idempotencyKey: 'retry-d' });
    const second = await retry(failed, { idempotencyKey: 'retry-d' });
    assert.equal(first.status, 202);
    assert.equal(second.status, 202);
    assert.equal(second.body.id, first.body.id);
    assert.equal((await stack.api.waitForEnd(key, first.body.id)).status, 'completed');
    const rows = await stack.db.selectFrom('missions').select('id').where('retry_of', '=', failed).execute();
    assert.equal(rows.length, 1);
  });

  it('answers 409 for a completed mission, 404 for someone else’s', async () => {
    stack.model.enqueue({ reply: { text: 'fine' } });
    const { id } = await stack.api.startMission(key, { skill: 'retrier', objective: 'Just answer.' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    const completed = await retry(id);
    assert.equal(completed.status, 409);
    assert.match(completed.body.error.message, /completed/);

    const failed = await failOnTurnThree('e');
    const other = await stack.api.newKey();
    const foreign = await retry(failed, {}, other);
    assert.equal(foreign.status, 404);
    assert.equal((await stack.api.getMission(key, failed)).body.retriedBy, undefined);
  });

  it('answers 422 naming skill when the skill version is no longer active', async () => {
    const skill = await stack.api.createSkill(key, skillMd({ name: 'fleeting', maxTurns: 2 }));
    stack.model.enqueue({ status: 400, message: 'messages: bad block' });
    const { id } = await stack.api.startMission(key, { skill: 'fleeting', objective: 'Fail at once.' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'failed');
    const off = await stack.api.request('POST', `/api/v1/skills/${skill.id}/deactivate`, { key });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    const res = await retry(id);
    assert.equal(res.status, 422);
    assert.equal(res.body.error.details.fields[0].field, 'skill');
    assert.match(res.body.error.message, /no longer active/);
  });
});

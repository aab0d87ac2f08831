import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

// Texts of the user message that opens a model request (after the tool results), as the model reads them.
const userTexts = (request: { messages: unknown[] }): string[] => {
  const last = request.messages.at(-1) as { role: string; content: Array<{ type: string; text?: string }> };
  return last.role === 'user' ? last.content.flatMap((b) => (b.type === 'text' && b.text ? [b.text] : [])) : [];
};

describe('messages to a running mission', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { MAX_QUEUED_MESSAGES: '2' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'steered', tools: ['lab.lookup', 'lab.scan'], maxTurns: 5 }));
  });
  after(() => stack.stop());

  const send = (id: string, body: Record<string, unknown>, k = key) =>
    stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key: k, body });

  it('queues two messages sent during one turn: both arrive, in order, in the next model request, each with a message event', async () => {
    const first = stack.model.requests.length;
    stack.tools.on('lookup', () => ({ delayMs: 2_000, body: { hit: 'found' } }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_q', name: 'lab__lookup', input: { q: 'x' } }] } }, { reply: { text: 'Done.' } });
    const { id } = await stack.api.startMission(key, { skill: 'steered', objective: 'Look it up.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.input.q === 'x'));

    const a = await send(id, { text: 'Also check the weekend.' });
    const b = await send(id, { text: 'And keep it short.', mode: 'queue' });
    assert.equal(a.status, 202);
    assert.equal(b.status, 202);
    assert.equal(a.body.position, 1);
    assert.equal(b.body.position, 2);
    assert.notEqual(a.body.messageId, b.body.messageId);

    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const second = stack.model.requests[first + 1]!;
    assert.equal(second.toolResults.length, 1, 'the tool result comes first');
    assert.deepEqual(userTexts(second), ['Also check the weekend.', 'And keep it short.']);
    assert.equal(stack.model.requests.length - first, 2, 'no model call of its own per message');
    const delivered = eventsOf((await stack.api.readEvents(key, id)).frames).filter((e) => e.type === 'message');
    assert.deepEqual(
      delivered.map((e) => (e.type === 'message' ? [e.messageId, e.turn] : [])),
      [
        [a.body.messageId, 2],
        [b.body.messageId, 2],
      ],
    );
  });

  it('a retried request with the same idempotencyKey is the same message, delivered once', async () => {
    const first = stack.model.requests.length;
    stack.tools.on('lookup', () => ({ delayMs: 2_000, body: { hit: 'found' } }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_i', name: 'lab__lookup', input: { q: 'idem' } }] } }, { reply: { text: 'ok' } });
    const { id } = await stack.api.startMission(key, { skill: 'steered', objective: 'Once.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.input.q === 'idem'));
    const a = await send(id, { text: 'Only once, please.', idempotencyKey: 'k-1' });
    const again = await send(id, { text: 'Only once, please.', idempotencyKey: 'k-1' });
    assert.equal(a.status, 202);
    assert.equal(again.status, 202);
    assert.deepEqual(again.body, a.body);
    await stack.api.waitForEnd(key, id);
    assert.deepEqual(userTexts(stack.model.requests[first + 1]!), ['Only once, please.']);
  });

  it('interrupt cancels the model call in flight and asks again at once with the message', async () => {
    const first = stack.model.requests.length;
    stack.model.enqueue({ hang: true }, { reply: { text: 'Answer to the new question.' } });
    const { id } = await stack.api.startMission(key, { skill: 'steered', objective: 'Think long.' });
    await stack.model.waitFor(() => stack.model.requests.length > first);
    const res = await send(id, { text: 'Stop: answer this instead.', mode: 'interrupt' });
    assert.equal(res.status, 202);
    assert.equal(res.body.position, 1);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.text, 'Answer to the new question.');
    assert.equal(stack.model.requests[first]!.aborted, true, 'the call in flight was cancelled');
    const next = stack.model.requests[first + 1]!;
    assert.ok(next.lastUserText.includes('Objective: Think long.'), 'the same turn, the objective first');
    assert.deepEqual(userTexts(next).slice(1), ['Stop: answer this instead.']);
    assert.equal(mission.turn, 1, 'the interrupted turn is asked again, not counted twice');
  });

  it('interrupt with cancelTools ends the running tool calls cancelled; the next request carries the message', async () => {
    const first = stack.model.requests.length;
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_hang', name: 'lab__scan', input: { target: 'forever' } }] } },
      { reply: { text: 'Fine.' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'steered', objective: 'Scan.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.input.target === 'forever'));
    assert.equal((await send(id, { text: 'Never mind the scan.', mode: 'interrupt', cancelTools: true })).status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.tools[0].status, 'cancelled');
    const next = stack.model.requests[first + 1]!;
    assert.ok(next.toolResults[0]!.isError && /cancelled/.test(next.toolResults[0]!.content));
    assert.deepEqual(userTexts(next), ['Never mind the scan.']);
  });

  it('an interrupt after the model answered cancels nothing and goes ahead of queued messages', async () => {
    const first = stack.model.requests.length;
    stack.tools.on('lookup', () => ({ delayMs: 2_000, body: { hit: 'kept' } }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_k', name: 'lab__lookup', input: { q: 'keep' } }] } }, { reply: { text: 'ok' } });
    const { id } = await stack.api.startMission(key, { skill: 'steered', objective: 'Keep going.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.input.q === 'keep'));
    await send(id, { text: 'queued one' });
    const urgent = await send(id, { text: 'urgent one', mode: 'interrupt' });
    assert.equal(urgent.body.position, 1);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.tools[0].status, 'completed', 'the running tool was not cancelled');
    assert.deepEqual(userTexts(stack.model.requests[first + 1]!), ['urgent one', 'queued one']);
  });

  it('refuses bad messages with a 4xx naming the problem', async () => {
    stack.tools.on('lookup', () => ({ delayMs: 2_500, body: { hit: 'x' } }));
    stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_r', name: 'lab__lookup', input: { q: 'refuse' } }] } }, { reply: { text: 'ok' } });
    const { id } = await stack.api.startMission(key, { skill: 'steered', objective: 'Refusals.' });
    await stack.tools.waitFor(() => stack.tools.requests.some((r) => r.input.q === 'refuse'));

    const empty = await send(id, { text: '  ' });
    assert.equal(empty.status, 400);
    assert.match(JSON.stringify(empty.body.error), /text/);
    const big = await send(id, { text: 'x'.repeat(32_001) });
    assert.equal(big.status, 413);
    assert.match(big.body.error.message, /32000/);
    const other = await stack.api.newKey();
    assert.equal((await send(id, { text: 'hi' }, other)).status, 404, "someone else's mission");
    assert.equal((await send(id, { text: 'one' })).status, 202);
    assert.equal((await send(id, { text: 'two' })).status, 202);
    const full = await send(id, { text: 'three' });
    assert.equal(full.status, 409);
    assert.match(full.body.error.message, /MAX_QUEUED_MESSAGES=2/);

    await stack.api.waitForEnd(key, id);
    const ended = await send(id, { text: 'too late' });
    assert.equal(ended.status, 409);
    assert.match(ended.body.error.message, /POST \/api\/v1\/missions/);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ALL_CAPABILITIES, eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../testkit/webhook-receiver.ts';
import { StatusSearchAttribute } from '../../contracts/mission.ts';

/**
 * Budgets that pause (`budgetPolicy: "pause"`): at its budget a mission waits `paused` holding no slot, and
 * `PATCH /missions/:id` lets it go on where it stopped; BUDGET_PAUSE_TIMEOUT_S ends the wait with the final answer.
 */
describe('budgets that pause', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let key: string;
  const toolTurn = (n: number, target: string) => ({
    reply: { toolUses: [{ id: `tu_pause_${n}`, name: 'lab__scan', input: { target } }], usage: { inputTokens: 400, outputTokens: 100 } },
  });
  const status = async (id: string) => (await stack.api.getMission(key, id)).body.status as string;
  const gates = new Map<string, () => void>();
  /** What a user reads of a mission's tool calls: its embeds' statuses and its feed's kinds, newest first. */
  const callRecords = async (id: string) => ({
    embeds: ((await stack.api.request('GET', `/api/v1/embeds?missionId=${id}`, { key })).body.items as Array<{ status: string }>).map(
      (e) => e.status,
    ),
    feed: ((await stack.api.request('GET', `/api/v1/activity?missionId=${id}`, { key })).body.items as Array<{ kind: string }>).map(
      (a) => a.kind,
    ),
  });
  const scanned = (target: string) => stack.tools.waitFor(() => stack.tools.requests.some((r) => r.input.target === target));

  before(async () => {
    stack = await startTestStack({
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: '127.0.0.1', MAX_RUNNING_MISSIONS_PER_USER: '1', BUDGET_PAUSE_TIMEOUT_S: '3' },
    });
    receiver = await startWebhookReceiver();
    key = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 't-pause', userId: 'pat' });
    await stack.api.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.scan'], maxTurns: 5 }));
    // A scan of `gated-*` answers once the test opens it; any other at once.
    stack.tools.on('scan', async (input) => {
      const target = String(input.target);
      if (target.startsWith('gated')) await new Promise<void>((ok) => gates.set(target, ok));
      return { body: { scanned: target } };
    });
  });
  after(async () => {
    await receiver.close();
    await stack.stop();
  });

  it('pauses at the budget instead of answering, frees its slot, and goes on where it stopped once PATCH raises it', async () => {
    const hook = (await stack.api.request('POST', '/api/v1/webhooks', { key, body: { url: receiver.url, events: ['budget.reached'] } }))
      .body as { id: string; secret: string };
    // Turn 1 spends 500 tokens; the next call (≈ 500 more) would pass 800: paused before its tool runs.
    stack.model.enqueue(toolTurn(1, 'first'));
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Scan twice.', maxTokens: 800, budgetPolicy: 'pause' });
    await until(async () => (await status(id)) === 'paused', { timeoutMs: 60_000, what: 'the mission paused' });
    assert.equal(stack.tools.requests.filter((r) => r.input.target === 'first').length, 0, 'the tool asked for has not run');
    const described = await stack.handle(id).describe();
    assert.equal(described.typedSearchAttributes.get(StatusSearchAttribute), 'paused', 'the Web UI lists it paused');
    const detail = (await stack.api.getMission(key, id)).body;
    assert.equal(detail.budgetPolicy, 'pause');

    // Within 10 s: woken by the pause itself, not by the sweep (deliveries pending 15 s or more).
    const [got] = await receiver.waitFor((all) => all.some((r) => r.body.includes(id)), 10_000);
    const payload = receiver.verify(got!, hook.secret);
    assert.equal(payload.type, 'budget.reached');
    assert.deepEqual({ status: payload.data.status, turn: payload.data.turn }, { status: 'paused', turn: 1 });

    // Paused holds no slot (the user's limit is 1): another mission starts at once and holds it while its scan runs.
    stack.model.enqueue(toolTurn(9, 'gated-other'), { reply: { text: 'Other done.' } });
    const other = (await stack.api.startMission(key, { skill: 'scanner', objective: 'Scan the other.' })) as { id: string; status: string };
    assert.equal(other.status, 'running');
    await scanned('gated-other');

    // The raise is accepted now; the mission waits queued for the slot, then runs the tool it had asked for.
    stack.model.enqueue({ reply: { text: 'Scanned within the new budget.', usage: { inputTokens: 600, outputTokens: 50 } } });
    const raised = await stack.api.request('PATCH', `/api/v1/missions/${id}`, { key, body: { maxTokens: 5000 } });
    assert.equal(raised.status, 200, JSON.stringify(raised.body));
    assert.deepEqual(raised.body.budget, { maxTokens: 5000 });
    await until(async () => (await status(id)) === 'queued', { timeoutMs: 30_000, what: 'queued behind the running mission' });
    gates.get('gated-other')!();
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'completed');
    assert.equal(ended.result.stoppedBy, 'answer');
    assert.equal(ended.result.text, 'Scanned within the new budget.');
    assert.equal(stack.tools.requests.filter((r) => r.input.target === 'first').length, 1, 'the tool ran once, after the raise');
    assert.deepEqual(ended.limits.maxTokens, { value: 5000, source: 'request' });

    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    const reached = events.find((e) => e.type === 'budget_reached');
    assert.deepEqual(reached && { turn: reached.turn, budget: reached.budget, spent: reached.spent }, {
      turn: 1,
      budget: { maxTokens: 800 },
      spent: { tokens: 500, costUsd: 0 },
    });
    const statuses = events.flatMap((e) => (e.type === 'status' ? [e.status] : []));
    assert.deepEqual(statuses, ['running', 'paused', 'queued', 'running', 'completed']);
    await stack.api.waitForEnd(key, other.id);

    const late = await stack.api.request('PATCH', `/api/v1/missions/${id}`, { key, body: { maxTokens: 9000 } });
    assert.equal(late.status, 409, 'an ended mission has no budget to change');
  });

  it('ends the pause with the forced final answer once BUDGET_PAUSE_TIMEOUT_S passes without a raise', async () => {
    stack.model.enqueue(toolTurn(2, 'second'), { reply: { text: 'Final, within budget.' } });
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Scan.', maxTokens: 800, budgetPolicy: 'pause' });
    await until(async () => (await status(id)) === 'paused', { timeoutMs: 60_000, what: 'the mission paused' });
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'completed');
    assert.equal(ended.result.stoppedBy, 'budget');
    assert.equal(ended.result.text, 'Final, within budget.');
    assert.equal(stack.tools.requests.filter((r) => r.input.target === 'second').length, 0, 'the tool asked for never ran');
    // The call started with its reply, was never run, and so leaves nothing: no embed processing, no feed start open.
    assert.deepEqual(await callRecords(id), { embeds: [], feed: ['mission_end'] });
  });

  it('cancelled while paused: the call its reply started never ran, and leaves no embed processing nor feed start', async () => {
    stack.model.enqueue(toolTurn(3, 'third'));
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Scan.', maxTokens: 800, budgetPolicy: 'pause' });
    await until(async () => (await status(id)) === 'paused', { timeoutMs: 60_000, what: 'the mission paused' });
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key })).status, 202);
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'cancelled');
    assert.equal(stack.tools.requests.filter((r) => r.input.target === 'third').length, 0, 'the tool asked for never ran');
    assert.deepEqual(await callRecords(id), { embeds: [], feed: ['mission_end'] });
  });

  it('refuses a bad change with a 4xx naming it, and a budget without a policy still ends the mission as before', async () => {
    stack.model.enqueue(toolTurn(3, 'gated-third'), { reply: { text: 'Third.' } });
    const { id } = await stack.api.startMission(key, { skill: 'scanner', objective: 'Scan the third.' });
    await scanned('gated-third');
    const nothing = await stack.api.request('PATCH', `/api/v1/missions/${id}`, { key, body: {} });
    assert.deepEqual([nothing.status, nothing.body.budget], [200, {}], 'an empty change changes nothing');
    const unknown = await stack.api.request('PATCH', `/api/v1/missions/${id}`, { key, body: { maxTurns: 3 } });
    assert.equal(unknown.status, 400);
    assert.match(JSON.stringify(unknown.body), /maxTurns/);
    const negative = await stack.api.request('PATCH', `/api/v1/missions/${id}`, { key, body: { maxTokens: -1 } });
    assert.equal(negative.status, 400);
    assert.match(JSON.stringify(negative.body), /maxTokens/);
    const unpriced = await stack.api.request('PATCH', `/api/v1/missions/${id}`, { key, body: { maxCostUsd: 1 } });
    assert.equal(unpriced.status, 422);
    assert.match(JSON.stringify(unpriced.body), /MODEL_PRICES/);
    const policy = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'scanner', objective: 'x', workspaceCode: 'w', budgetPolicy: 'later' },
    });
    assert.equal(policy.status, 400);
    assert.match(JSON.stringify(policy.body), /budgetPolicy/);
    const stranger = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 't-pause', userId: 'sam' });
    assert.equal((await stack.api.request('PATCH', `/api/v1/missions/${id}`, { key: stranger, body: { maxTokens: 10 } })).status, 404);
    gates.get('gated-third')!();
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
  });
});

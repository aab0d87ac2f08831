import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MissionEvent } from '../../contracts/events.ts';
import type { RecordedRequest, Step } from '../../fake-model/fake-model-types.ts';
import { eventsOf } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { spawnWorker } from '../helpers/worker-process.ts';

// One token costs $0.000001: every call is priced, so costs add up visibly.
const PRICES = { 'allegro-priced': { inputPerMTok: 1, outputPerMTok: 1 } };

/** A SKILL.md whose missions may delegate to `delegates`. */
const delegating = (name: string, delegates: string) =>
  [
    '---',
    `name: ${name}`,
    `description: Test skill ${name}.`,
    'metadata:',
    `  cadenza-delegates: ${delegates}`,
    '---',
    'Delegate.',
    '',
  ].join('\n');
const skillOf = (r: RecordedRequest) => /carrying out the skill "([^"]+)"/.exec(r.system)?.[1];
const delegateEvents = (events: MissionEvent[]) =>
  events.filter((e): e is Extract<MissionEvent, { type: 'delegate' }> => e.type === 'delegate');

describe('sub-missions (delegate)', () => {
  let stack: TestStack;
  let key: string;
  /** Answers each request by the skill it runs for; `delegate` calls are made by the skills that are offered it. */
  const answer = (bySkill: Record<string, (r: RecordedRequest) => Step>) =>
    stack.model.setHandler((r) => bySkill[skillOf(r) ?? '']?.(r) ?? { reply: { text: 'unscripted' } });
  const delegateCall = (id: string, skill: string, extra: Record<string, unknown> = {}): Step => ({
    reply: { toolUses: [{ id, name: 'delegate', input: { skill, objective: `Work for ${skill}.`, ...extra } }] },
  });
  /** The first turn delegates; the next one answers with the delegate call's result. */
  const delegateThenQuote = (id: string, skill: string) => (r: RecordedRequest) =>
    r.toolResults.length === 0
      ? delegateCall(id, skill)
      : { reply: { text: `Quoted: ${r.toolResults.map((t) => `${t.isError ? 'ERROR ' : ''}${t.content}`).join(' | ')}` } };

  before(async () => {
    stack = await startTestStack({
      env: {
        ...{ MODEL_TIER_ALLEGRO: 'allegro-priced', MODEL_PRICES: JSON.stringify(PRICES), MAX_DELEGATION_DEPTH: '1' },
        // Two slots a user: a tree must hold one, so another mission runs beside it.
        MAX_RUNNING_MISSIONS_PER_USER: '2',
      },
    });
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'boss-user' });
    await stack.api.createSkill(key, delegating('boss', 'helper stranger idle-helper slow-helper'));
    await stack.api.createSkill(key, skillMd({ name: 'helper', maxTurns: 3 }));
    await stack.api.createSkill(key, skillMd({ name: 'slow-helper', maxTurns: 3 }));
    await stack.api.createSkill(key, delegating('recurse', 'recurse'));
    const idle = await stack.api.createSkill(key, skillMd({ name: 'idle-helper' }));
    assert.equal((await stack.api.request('POST', `/api/v1/skills/${idle.id}/deactivate`, { key })).status, 200);
    // Another user's skill of the name boss lists: never the boss user's to run.
    const other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'other-user' });
    await stack.api.createSkill(other, skillMd({ name: 'stranger' }));
  });
  after(() => stack.stop());

  it('runs the target skill as a child mission whose answer is the call result; the parent counts its cost', async () => {
    answer({ boss: delegateThenQuote('tu_del', 'helper'), helper: () => ({ reply: { text: 'The helper found 42.' } }) });
    const { id } = await stack.api.startMission(key, { skill: 'boss', objective: 'Get the number.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.match(mission.result.text, /^Quoted: .*answer: The helper found 42\./s, 'the parent answered with the child’s answer');
    assert.deepEqual(
      mission.tools.map((t: { toolUseId: string; name: string; status: string }) => [t.toolUseId, t.name, t.status]),
      [['tu_del', 'system.delegate', 'completed']],
    );

    // The child is a mission of its own, with its parent named; the parent lists it.
    assert.equal(mission.children.length, 1);
    const childId = mission.children[0].id as string;
    assert.deepEqual([mission.children[0].status, mission.children[0].skill.name], ['completed', 'helper']);
    const child = (await stack.api.getMission(key, childId)).body;
    assert.deepEqual(
      [child.status, child.parentId, child.skill.name, child.result.text],
      ['completed', id, 'helper', 'The helper found 42.'],
    );
    assert.equal(child.workflowId, `mission-${childId}`);

    // Offered only to the skill that lists delegates.
    const requests = stack.model.requests;
    assert.ok(requests.find((r) => skillOf(r) === 'boss')!.toolNames.includes('delegate'));
    assert.ok(!requests.find((r) => skillOf(r) === 'helper')!.toolNames.includes('delegate'));

    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    assert.deepEqual(
      delegateEvents(events).map((e) => [e.toolUseId, e.childId, e.skill, e.status]),
      [
        ['tu_del', childId, 'helper', 'started'],
        ['tu_del', childId, 'helper', 'completed'],
      ],
    );
    const toolStart = events.findIndex((e) => e.type === 'tool_start');
    const toolEnd = events.findIndex((e) => e.type === 'tool_end');
    const [started, finished] = delegateEvents(events).map((e) => events.indexOf(e));
    assert.ok(toolStart < started! && finished! < toolEnd, 'the delegate events sit inside the call');

    // The parent's totals include the child's: its own two calls plus the child's one.
    assert.ok(child.result.metrics.costUsd > 0);
    const own = await stack.db.selectFrom('model_calls').select(['input_tokens', 'output_tokens']).where('mission_id', '=', id).execute();
    const ownTokens = own.reduce((n, c) => n + c.input_tokens + c.output_tokens, 0);
    const childTokens = child.result.metrics.inputTokens + child.result.metrics.outputTokens;
    assert.equal(mission.result.metrics.inputTokens + mission.result.metrics.outputTokens, ownTokens + childTokens);
    assert.ok(Math.abs(mission.result.metrics.costUsd - (ownTokens + childTokens) / 1_000_000) < 1e-9);
  });

  it('parallel delegate calls share what is left of the budget: together the children cannot pass it', async () => {
    answer({
      boss: (r) =>
        r.toolResults.length === 0
          ? {
              reply: {
                toolUses: [
                  { id: 'tu_a', name: 'delegate', input: { skill: 'helper', objective: 'Half of it.' } },
                  { id: 'tu_b', name: 'delegate', input: { skill: 'helper', objective: 'The other half.' } },
                ],
              },
            }
          : { reply: { text: 'Both done.' } },
      helper: () => ({ reply: { text: 'Done.' } }),
    });
    const budget = 0.01;
    const { id } = await stack.api.startMission(key, { skill: 'boss', objective: 'Split the work.', maxCostUsd: budget });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const children = await stack.db.selectFrom('missions').select(['id', 'max_cost_usd']).where('parent_id', '=', id).execute();
    assert.equal(children.length, 2);
    const caps = children.map((c) => c.max_cost_usd!);
    assert.ok(
      caps.every((cap) => cap > 0 && cap <= budget / 2),
      `each child's cap is a share: ${caps.join(', ')}`,
    );
    assert.ok(caps[0]! + caps[1]! <= budget, 'together they stay within the parent’s budget');
  });

  it('cancelling the delegate call cancels the child mission; the parent goes on', async () => {
    answer({ boss: delegateThenQuote('tu_slow', 'slow-helper'), 'slow-helper': () => ({ hang: true }) });
    const { id } = await stack.api.startMission(key, { skill: 'boss', objective: 'Wait for the slow one.' });
    await stack.model.waitFor(() => stack.model.requests.some((r) => skillOf(r) === 'slow-helper'));
    const during = (await stack.api.getMission(key, id)).body;
    const childId = during.children[0].id as string;
    assert.equal((await stack.api.getMission(key, childId)).body.status, 'running');

    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/tools/tu_slow/cancel`, { key })).status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.tools[0].status, 'cancelled');
    assert.match(mission.result.text, /ERROR .*cancelled/, 'the model saw the call cancelled');
    const child = (await stack.api.getMission(key, childId)).body;
    assert.equal(child.status, 'cancelled');
    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    assert.deepEqual(
      delegateEvents(events).map((e) => e.status),
      ['started', 'cancelled'],
    );
  });

  it('cancelling the parent mission cancels its running child', async () => {
    answer({ boss: delegateThenQuote('tu_stuck', 'slow-helper'), 'slow-helper': () => ({ hang: true }) });
    const slowCalls = () => stack.model.requests.filter((r) => skillOf(r) === 'slow-helper').length;
    const before = slowCalls();
    const { id } = await stack.api.startMission(key, { skill: 'boss', objective: 'Start and be cancelled.' });
    await stack.model.waitFor(() => slowCalls() > before);
    const childId = (await stack.api.getMission(key, id)).body.children[0].id as string;
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key })).status, 202);
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'cancelled');
    const child = await stack.api.waitForEnd(key, childId);
    assert.deepEqual([child.status, child.error.phase], ['cancelled', 'model']);
  });

  it('a child runs on its root’s admission slot: another mission of the user still finds the second slot free', async () => {
    answer({
      boss: delegateThenQuote('tu_held', 'slow-helper'),
      'slow-helper': () => ({ hang: true }),
      helper: () => ({ reply: { text: 'Beside the tree.' } }),
    });
    const slowCalls = () => stack.model.requests.filter((r) => skillOf(r) === 'slow-helper').length;
    const before = slowCalls();
    const tree = await stack.api.startMission(key, { skill: 'boss', objective: 'Hold a slot.' });
    await stack.model.waitFor(() => slowCalls() > before);
    const other = await stack.api.startMission(key, { skill: 'helper', objective: 'Run beside.' });
    const done = await stack.api.waitForEnd(key, other.id, 30_000);
    assert.equal(done.status, 'completed', 'not queued behind the parent and its child');
    assert.equal((await stack.api.request('POST', `/api/v1/missions/${tree.id}/cancel`, { key })).status, 202);
    assert.equal((await stack.api.waitForEnd(key, tree.id)).status, 'cancelled');
  });

  it('a child that fails is an error result naming why; the parent goes on', async () => {
    answer({ boss: delegateThenQuote('tu_fail', 'helper'), helper: () => ({ status: 400, message: 'bad request from the fake' }) });
    const { id } = await stack.api.startMission(key, { skill: 'boss', objective: 'Let the helper fail.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.tools[0].status, 'error');
    const childId = mission.children[0].id as string;
    assert.equal((await stack.api.getMission(key, childId)).body.status, 'failed');
    assert.match(mission.result.text, new RegExp(`ERROR .*sub-mission ${childId} \\(helper\\) failed: model: .*bad request`));
    const events = eventsOf((await stack.api.readEvents(key, id)).frames);
    assert.deepEqual(
      delegateEvents(events).map((e) => e.status),
      ['started', 'failed'],
    );
  });

  it('refuses another user’s skill and an inactive one as error results the model reads', async () => {
    answer({
      boss: (r) =>
        r.toolResults.length === 0
          ? {
              reply: {
                toolUses: [delegateCall('tu_stranger', 'stranger'), delegateCall('tu_idle', 'idle-helper')].flatMap((s) =>
                  'reply' in s ? s.reply.toolUses! : [],
                ),
              },
            }
          : { reply: { text: `Quoted: ${r.toolResults.map((t) => `${t.isError ? 'ERROR ' : ''}${t.content}`).join(' | ')}` } },
    });
    const { id } = await stack.api.startMission(key, { skill: 'boss', objective: 'Try the others.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const results = stack.model.requests.filter((r) => skillOf(r) === 'boss').at(-1)!.toolResults;
    assert.deepEqual(
      results.map((r) => [r.toolUseId, r.isError]),
      [
        ['tu_stranger', true],
        ['tu_idle', true],
      ],
    );
    assert.match(results[0]!.content, /skill stranger not found/);
    assert.match(results[1]!.content, /idle-helper is (draft|inactive).*not active/);
    assert.equal(mission.children, undefined, 'no child mission was recorded');
  });

  it('refuses a delegation past MAX_DELEGATION_DEPTH as an error result; the child answers anyway', async () => {
    answer({ recurse: delegateThenQuote('tu_rec', 'recurse') });
    const { id } = await stack.api.startMission(key, { skill: 'recurse', objective: 'Go deep.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const childId = mission.children[0].id as string;
    const child = (await stack.api.getMission(key, childId)).body;
    assert.equal(child.status, 'completed');
    assert.match(child.result.text, /ERROR .*MAX_DELEGATION_DEPTH \(1\)/, 'the child’s own delegate call was refused');
    assert.equal(child.children, undefined);
    assert.match(mission.result.text, /MAX_DELEGATION_DEPTH/, 'the root got the child’s answer');
  });
});

describe('sub-missions across a worker’s death (SIGKILL)', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ worker: false });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, delegating('boss', 'helper'));
    await stack.api.createSkill(key, skillMd({ name: 'helper', maxTurns: 3 }));
  });
  after(() => stack.stop());

  it('a worker killed while the child runs loses nothing: one child, its answer reaches the parent', async () => {
    let helperCalls = 0;
    stack.model.setHandler((r) => {
      if (skillOf(r) === 'helper') return ++helperCalls === 1 ? { hang: true } : { reply: { text: 'Helper survived.' } };
      return r.toolResults.length === 0
        ? { reply: { toolUses: [{ id: 'tu_k', name: 'delegate', input: { skill: 'helper', objective: 'Survive.' } }] } }
        : { reply: { text: `Parent got: ${r.toolResults[0]!.content}` } };
    });
    const first = await spawnWorker(stack.env);
    const { id } = await stack.api.startMission(key, { skill: 'boss', objective: 'Delegate across a crash.' });
    // The request is recorded as it arrives (a handler's own counter is not re-checked until the next arrival).
    await stack.model.waitFor(() => stack.model.requests.some((r) => skillOf(r) === 'helper'));
    assert.notEqual(await first.kill('SIGKILL'), 0);
    const second = await spawnWorker(stack.env);
    try {
      const mission = await stack.api.waitForEnd(key, id);
      assert.equal(mission.status, 'completed');
      assert.match(mission.result.text, /Helper survived\./);
      assert.equal(mission.children.length, 1, 'one child mission, not one per attempt');
      const child = (await stack.api.getMission(key, mission.children[0].id)).body;
      assert.deepEqual([child.status, child.parentId, child.result.text], ['completed', id, 'Helper survived.']);
      const rows = await stack.db.selectFrom('missions').select('id').where('parent_id', '=', id).execute();
      assert.equal(rows.length, 1);
      const events = eventsOf((await stack.api.readEvents(key, id)).frames);
      assert.deepEqual(
        delegateEvents(events).map((e) => e.status),
        ['started', 'completed'],
      );
    } finally {
      await second.kill('SIGTERM');
    }
  });
});

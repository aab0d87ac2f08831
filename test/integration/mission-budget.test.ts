import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

// One token costs $0.001 on the allegro model; the forte model has no price.
const PRICES = { 'allegro-priced': { inputPerMTok: 1000, outputPerMTok: 1000 } };

describe('mission budgets, costs and tiers', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({
      env: { MODEL_TIER_ALLEGRO: 'allegro-priced', MODEL_TIER_FORTE: 'forte-unpriced', MODEL_PRICES: JSON.stringify(PRICES) },
    });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'spender', tools: ['lab.lookup'], maxTurns: 10 }));
    await stack.api.createSkill(key, skillMd({ name: 'big-spender', tools: ['lab.lookup'], maxTurns: 10, model: 'forte' }));
  });
  after(() => stack.stop());

  const toolTurn = (n: number, usage: { inputTokens: number; outputTokens: number }) => ({
    reply: { toolUses: [{ id: `tu_${n}`, name: 'lab__lookup', input: { q: `q${n}` } }], usage },
  });
  const run = async (body: Record<string, unknown>) => {
    const first = stack.model.requests.length;
    const calls = stack.tools.requests.length;
    const { id } = await stack.api.startMission(key, { skill: 'spender', ...body });
    const mission = await stack.api.waitForEnd(key, id);
    return { id, mission, requests: stack.model.requests.slice(first), toolRequests: stack.tools.requests.length - calls };
  };

  it('stops calling tools when the next turn would pass maxTokens, and says the budget ended it', async () => {
    stack.model.enqueue(toolTurn(1, { inputTokens: 100, outputTokens: 20 }), toolTurn(2, { inputTokens: 150, outputTokens: 20 }), {
      reply: { text: 'Best answer within budget.', usage: { inputTokens: 200, outputTokens: 10 } },
    });
    // After turn 1: 120 used, next ≈ 120 → 240 ≤ 400, go on. After turn 2: 290 used, next ≈ 170 → 460 > 400, stop.
    const { id, mission, requests, toolRequests } = await run({ objective: 'Spend tokens.', maxTokens: 400 });
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.stoppedBy, 'budget');
    assert.equal(mission.result.text, 'Best answer within budget.');
    assert.equal(requests.length, 3, 'two turns and the forced final call');
    assert.deepEqual(requests[2]!.toolNames, [], 'the final call offers no tools');
    assert.match(requests[2]!.lastUserText, /budget/i);
    assert.equal(toolRequests, 1, "the second turn's tool call was not run");
    // Its start, written with the reply, is gone with it: only the call that ran has an embed and feed rows.
    const embeds = (await stack.api.request('GET', `/api/v1/embeds?missionId=${id}`, { key })).body.items;
    assert.deepEqual(
      embeds.map((e: { toolUseId: string; status: string }) => [e.toolUseId, e.status]),
      [['tu_1', 'finished']],
    );
    const feed = (await stack.api.request('GET', `/api/v1/activity?missionId=${id}`, { key })).body.items;
    assert.deepEqual(
      feed.map((a: { kind: string; toolUseId?: string }) => [a.kind, a.toolUseId ?? null]),
      [
        ['mission_end', null],
        ['tool_end', 'tu_1'],
        ['tool_start', 'tu_1'],
      ],
    );
    assert.equal(mission.result.metrics.toolCalls, 1);
    assert.equal(mission.result.metrics.inputTokens + mission.result.metrics.outputTokens, 500);
  });

  it('reports the cost from the price table and stops on maxCostUsd', async () => {
    stack.model.enqueue(
      toolTurn(1, { inputTokens: 100, outputTokens: 0 }),
      toolTurn(2, { inputTokens: 100, outputTokens: 0 }),
      toolTurn(3, { inputTokens: 200, outputTokens: 0 }),
      {
        reply: { text: 'Cheap answer.', usage: { inputTokens: 50, outputTokens: 50 } },
      },
    );
    // $0.10, $0.20 (+0.10 next: fits 0.5), $0.40 (+0.20 next: 0.60 > 0.5): stop, then the final call's $0.10.
    const { mission, toolRequests } = await run({ objective: 'Spend money.', maxCostUsd: 0.5 });
    assert.equal(mission.result.stoppedBy, 'budget');
    assert.equal(toolRequests, 2);
    assert.ok(Math.abs(mission.result.metrics.costUsd - 0.5) < 1e-9, `cost ${mission.result.metrics.costUsd}`);
  });

  it('without a budget runs to its answer and still reports the cost', async () => {
    stack.model.enqueue(toolTurn(1, { inputTokens: 1000, outputTokens: 1000 }), {
      reply: { text: 'Unbounded.', usage: { inputTokens: 1000, outputTokens: 0 } },
    });
    const { mission } = await run({ objective: 'No limits.' });
    assert.equal(mission.result.stoppedBy, 'answer');
    assert.ok(Math.abs(mission.result.metrics.costUsd - 3) < 1e-9);
  });

  it('refuses a cost budget on a model with no price, and bad budget values, naming the field', async () => {
    const unpriced = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'big-spender', objective: 'x', workspaceCode: 'w', maxCostUsd: 1 },
    });
    assert.equal(unpriced.status, 422);
    assert.match(unpriced.body.error.message, /forte-unpriced/);
    for (const [field, value] of [
      ['maxTokens', 0],
      ['maxTokens', 1.5],
      ['maxCostUsd', -1],
      ['maxCostUsd', 'ten'],
    ] as const) {
      const res = await stack.api.request('POST', '/api/v1/missions', {
        key,
        body: { skill: 'spender', objective: 'x', workspaceCode: 'w', [field]: value },
      });
      assert.equal(res.status, 400, `${field}=${value}`);
      assert.deepEqual(
        res.body.error.details.fields.map((f: { field: string }) => f.field),
        [field],
      );
    }
  });

  it('refuses at start (422) a mission whose skill names a tier the model map does not know', async () => {
    const skill = await stack.api.createSkill(key, skillMd({ name: 'odd-tier', model: 'forte' }));
    // Authoring validates the tier; a stored version can still name one the server's map lacks (older data, imports).
    await sql`insert into skill_versions (skill_id, version, skill_md, sha256, frontmatter, spec, body)
      select skill_id, 2, skill_md, sha256, frontmatter, jsonb_set(spec, '{tier}', '"presto"'), body from skill_versions where skill_id = ${skill.id}`.execute(
      stack.db,
    );
    await sql`update skills set active_version = 2 where id = ${skill.id}`.execute(stack.db);
    const res = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'odd-tier', objective: 'x', workspaceCode: 'w' },
    });
    assert.equal(res.status, 422);
    assert.match(res.body.error.message, /presto/);
    const rows = await stack.db.selectFrom('missions').select('id').where('skill_id', '=', skill.id).execute();
    assert.equal(rows.length, 0, 'no mission was recorded');
  });
});

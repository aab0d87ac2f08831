import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('a mission shows its effective limits and where each came from', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { MAX_TURNS_CAP: '12', DEFAULT_MAX_TOKENS: '40000' } });
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'limited' });
    await stack.api.createSkill(key, skillMd({ name: 'eight-turns', maxTurns: 8 }));
    await stack.api.createSkill(key, skillMd({ name: 'no-turn-limit' }));
  });
  after(() => stack.stop());

  const start = (body: Record<string, unknown>) =>
    stack.api.request('POST', '/api/v1/missions', { key, body: { objective: 'Answer briefly.', workspaceCode: 'ws', ...body } });

  it("lowers a request above the skill's limit to it, saying so in the 202 and in GET /missions/:id", async () => {
    const res = await start({ skill: 'eight-turns', maxTurns: 30 });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const expected = {
      maxTurns: { value: 8, source: 'skill', requested: 30 },
      maxTokens: { value: 40000, source: 'server' },
      maxCostUsd: { value: null, source: 'none' },
    };
    assert.deepEqual(res.body.limits, expected);
    await stack.api.waitForEnd(key, res.body.id);
    const detail = await stack.api.request('GET', `/api/v1/missions/${res.body.id}`, { key });
    assert.deepEqual(detail.body.limits, expected);
    const row = await stack.db.selectFrom('missions').select('max_turns').where('id', '=', res.body.id).executeTakeFirstOrThrow();
    assert.equal(row.max_turns, 8, 'the workflow runs the limit shown');
  });

  it('takes the request below every ceiling, and the server cap when nobody else sets one', async () => {
    const asked = await start({ skill: 'eight-turns', maxTurns: 2, maxTokens: 500 });
    assert.deepEqual(asked.body.limits.maxTurns, { value: 2, source: 'request' });
    assert.deepEqual(asked.body.limits.maxTokens, { value: 500, source: 'request' });
    const capped = await start({ skill: 'no-turn-limit' });
    assert.deepEqual(capped.body.limits.maxTurns, { value: 12, source: 'server' });
    const overCap = await start({ skill: 'no-turn-limit', maxTurns: 20 });
    assert.deepEqual(overCap.body.limits.maxTurns, { value: 12, source: 'server', requested: 20 });
    await Promise.all([asked, capped, overCap].map((r) => stack.api.waitForEnd(key, r.body.id)));
  });

  it('answers 400 for a turn limit outside the one range (1 to 50), in a request or in a SKILL.md', async () => {
    const res = await start({ skill: 'eight-turns', maxTurns: 100 });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.details.fields[0].field, 'maxTurns');
    const skill = await stack.api.request('POST', '/api/v1/skills', {
      key,
      raw: skillMd({ name: 'too-many', maxTurns: 51 }),
      headers: { 'content-type': 'text/markdown' },
    });
    assert.equal(skill.status, 400);
    assert.match(skill.body.error.message, /cadenza-max-turns: must be an integer from 1 to 50/);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SkillSearchAttribute, StatusSearchAttribute, UserSearchAttribute } from '../../contracts/mission.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('a mission as an operator sees it in the Temporal Web UI', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { MODEL_TIER_FORTE: 'forte-model-v9', MODEL_TIER_ALLEGRO: 'allegro-model-v3' } });
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'ada' });
    await stack.api.createSkill(key, skillMd({ name: 'ui-skill', tools: ['lab.lookup'], model: 'forte', maxTurns: 3 }));
  });
  after(() => stack.stop());

  it('carries search attributes, a summary, a memo and readable activity summaries; the tier resolves to its model id', async () => {
    stack.model.enqueue({ reply: { toolUses: [{ name: 'lab__lookup', input: { q: 'x' } }] } }, { reply: { text: 'done' } });
    const { id } = await stack.api.startMission(key, {
      skill: 'ui-skill',
      objective: 'Summarise the quarterly figures for the board meeting.',
    });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');

    const handle = stack.handle(id);
    assert.equal(handle.workflowId, `mission-${id}`);
    const d = await handle.describe();
    assert.equal(d.typedSearchAttributes.get(SkillSearchAttribute), 'ui-skill');
    assert.equal(d.typedSearchAttributes.get(UserSearchAttribute), 'acme/ada');
    assert.equal(d.typedSearchAttributes.get(StatusSearchAttribute), 'completed', 'status kept current');
    assert.match((await d.staticSummary()) ?? '', /^ui-skill v1 · Summarise the quarterly figures/);
    assert.deepEqual(d.memo, { tenantId: 'acme', userId: 'ada', skill: 'ui-skill', skillVersion: 1 });

    const history = await handle.fetchHistory();
    const summaries = (history.events ?? [])
      .map((e) => e.activityTaskScheduledEventAttributes && e.userMetadata?.summary?.data)
      .filter((data): data is Uint8Array => !!data)
      .map((data) => JSON.parse(Buffer.from(data).toString()) as string);
    assert.deepEqual(summaries, ['prepare mission', 'model forte · turn 1', 'tool lab.lookup', 'model forte · turn 2', 'complete mission']);

    assert.deepEqual(
      stack.model.requests.map((r) => r.model),
      ['forte-model-v9', 'forte-model-v9'],
      'the skill tier resolved to the configured model id',
    );

    let found: string[] = [];
    for (let i = 0; i < 50 && found.length === 0; i++) {
      found = [];
      for await (const w of stack.temporal.workflow.list({ query: `CadenzaSkill = 'ui-skill' AND CadenzaStatus = 'completed'` }))
        found.push(w.workflowId);
      if (found.length === 0) await new Promise((ok) => setTimeout(ok, 200));
    }
    assert.deepEqual(found, [`mission-${id}`], 'operators can filter missions by skill and status');
  });
});

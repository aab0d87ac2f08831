import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadDiscoverySet } from '../../testkit/discovery-eval.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

type Discovery = {
  items: Array<{ id: string; name: string; score: number; reason: 'named' | 'matched'; matched: { kind: string; text: string } }>;
  suppressed: Array<{ name: string; score: number; notFor: { text: string; score: number } }>;
};

describe('skill discovery', () => {
  let stack: TestStack;
  let key: string;
  const set = loadDiscoverySet();
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'finder' });
    for (const { skillMd: md } of set.skills) await stack.api.createSkill(key, md);
  });
  after(() => stack.stop());

  const discover = async (q: string, k = key, limit = 5): Promise<Discovery> => {
    const res = await stack.api.request('GET', `/api/v1/skills/discover?q=${encodeURIComponent(q)}&limit=${limit}`, { key: k });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Discovery;
  };

  it(`ranks the tuning set (${set.asks.length} asks over ${set.skills.length} skills, a regression gate): top-1 accuracy ≥ 0.9, false loads ≤ 0.1`, async () => {
    let hits = 0;
    let falseLoads = 0;
    const wrong: string[] = [];
    for (const { ask, expect } of set.asks) {
      const top = (await discover(ask, key, 1)).items[0]?.name ?? null;
      if (expect !== null && top === expect) hits++;
      if (expect === null && top !== null) falseLoads++;
      if (top !== expect) wrong.push(`${ask} → ${top} (expected ${expect})`);
    }
    const positives = set.asks.filter((a) => a.expect !== null).length;
    assert.ok(
      set.asks.length >= 40 && set.skills.length >= 8 && positives < set.asks.length,
      'the set has ≥40 asks over ≥8 skills, some that must load nothing',
    );
    assert.ok(hits / positives >= 0.9, `top-1 accuracy ${hits}/${positives}:\n${wrong.join('\n')}`);
    assert.ok(falseLoads / (set.asks.length - positives) <= 0.1, `false loads ${falseLoads}:\n${wrong.join('\n')}`);
  });

  it('suppresses a skill whose not_for ask matches about as well as its best positive one', async () => {
    const ask = 'Book me a flight and a hotel room in Lisbon for Saturday';
    const found = await discover(ask);
    assert.ok(!found.items.some((s) => s.name === 'trip-planner'), JSON.stringify(found));
    const suppressed = found.suppressed.find((s) => s.name === 'trip-planner');
    assert.ok(suppressed, JSON.stringify(found));
    assert.equal(suppressed.notFor.text, 'book a flight or a hotel room for me');
    assert.ok(suppressed.notFor.score >= suppressed.score - 0.05);
  });

  it('always surfaces skills named in the message, longest name first, before any match', async () => {
    const found = await discover('Ask the Weather Briefing what the trip-planner should pack for the chlorine leak');
    assert.deepEqual(
      found.items.slice(0, 2).map((s) => [s.name, s.reason]),
      [
        ['weather-briefing', 'named'],
        ['trip-planner', 'named'],
      ],
    );
    const despiteNotFor = await discover('use trip planner to book a flight or a hotel room for me');
    assert.deepEqual(despiteNotFor.items[0] && [despiteNotFor.items[0].name, despiteNotFor.items[0].reason], ['trip-planner', 'named']);
  });

  it('never proposes a quarantined import or another user’s skill', async () => {
    const md =
      '---\nname: zebra-tracker\ndescription: Tracks zebra migrations across the savanna.\ntriggers:\n  - where are the zebras migrating\n---\nTrack them.\n';
    const imported = await stack.api.request('POST', '/api/v1/skills/import', {
      key,
      raw: md,
      headers: { 'content-type': 'text/markdown' },
    });
    assert.equal(imported.status, 201);
    const other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'neighbour' });
    await stack.api.createSkill(other, skillMd({ name: 'giraffe-counter', body: 'Count giraffes.' }));
    assert.deepEqual(
      (await discover('zebra tracker: where are the zebras migrating?')).items.map((s) => s.name),
      [],
    );
    assert.deepEqual(
      (await discover('giraffe counter')).items.map((s) => s.name),
      [],
    );
  });

  it('runs the top-ranked skill for a mission with skill "auto" and records which', async () => {
    stack.model.enqueue({ reply: { text: 'Scaled.' } });
    const started = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'auto', objective: 'Scale my pancake recipe from 4 servings to 10', workspaceCode: 'ws' },
    });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    assert.equal(started.body.skill.name, 'recipe-scaler');
    const mission = await stack.api.waitForEnd(key, started.body.id);
    assert.equal(mission.status, 'completed');
    assert.deepEqual(mission.skill, { name: 'recipe-scaler', version: 1 });
    const system = JSON.stringify(stack.model.requests.at(-1)!.body);
    assert.match(system, /recipe-scaler/);
  });

  it('refuses skill "auto" with 422 naming `skill` when no active skill matches', async () => {
    const res = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'auto', objective: 'Teach me the basics of SQL joins', workspaceCode: 'ws' },
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.details.fields[0].field, 'skill');
  });

  it('answers 400 naming q when it is missing', async () => {
    const res = await stack.api.request('GET', '/api/v1/skills/discover', { key });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.details.fields[0].field, 'q');
  });
});

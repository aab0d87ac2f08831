import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const weatherReport = [
  '---',
  'name: weather-report',
  'description: Gives a weather report for a city - the forecast for the next days, temperatures, rain, wind and storm alerts.',
  'allowed-tools: lab.lookup',
  '---',
  'Look the city up, then report the forecast.',
  '',
].join('\n');

describe('create_skill and update_skill in a mission', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'author' });
    await stack.api.createSkill(key, skillMd({ name: 'writer', body: 'Write skills when asked.' }));
    await stack.api.createSkill(
      key,
      [
        '---',
        'name: weather-briefing',
        'description: Gives a short weather briefing for a place - forecast for the coming days, temperature, rain, wind and any official storm or heat alerts.',
        '---',
        'Brief the user.',
        '',
      ].join('\n'),
    );
    await stack.api.createSkill(key, skillMd({ name: 'invoice-reconciler', body: 'Reconcile.' }));
  });
  after(() => stack.stop());

  /** Runs one mission of `writer` whose model makes the given tool calls; returns each call's result by id. */
  async function runCalls(uses: Array<{ id: string; name: string; input: Record<string, unknown> }>) {
    const before = stack.model.requests.length;
    stack.model.enqueue({ reply: { toolUses: uses } }, { reply: { text: 'Done.' } });
    const { id } = await stack.api.startMission(key, { skill: 'writer', objective: 'Capture this as a skill.' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    const results = stack.model.requests[before + 1]!.toolResults;
    return { missionId: id, results: Object.fromEntries(results.map((r) => [r.toolUseId, { ...r, json: safeJson(r.content) }])) };
  }

  it('creates a draft from a valid SKILL.md, records the mission and warns naming the closest existing skill', async () => {
    const bad = '---\nname: Bad Name\ndescription: ""\nallowed-tools: nowhere.nothing\nmetadata:\n  cadenza-max-turns: "99"\n---\nDo it.\n';
    const { missionId, results } = await runCalls([
      { id: 'tu_bad', name: 'create_skill', input: { skillMd: bad } },
      { id: 'tu_good', name: 'create_skill', input: { skillMd: weatherReport } },
    ]);
    assert.ok(stack.model.requests.at(-2)!.toolNames.includes('create_skill'));
    const badResult = results.tu_bad!;
    assert.equal(badResult.isError, true);
    for (const field of ['name', 'description', 'allowed-tools', 'metadata.cadenza-max-turns'])
      assert.match(badResult.content, new RegExp(`${field.replace('.', '\\.')}: `), `the error names ${field}`);

    const good = results.tu_good!;
    assert.equal(good.isError, false, good.content);
    assert.equal(good.json.status, 'draft');
    assert.equal(good.json.nearDuplicate?.name, 'weather-briefing', 'the closest skill is named');
    assert.match(good.json.nearDuplicate.message, /update_skill/);

    const detail = await stack.api.request('GET', `/api/v1/skills/${good.json.id}`, { key });
    assert.equal(detail.status, 200);
    assert.equal(detail.body.status, 'draft');
    assert.equal(detail.body.source, 'authored');
    assert.equal(detail.body.missionId, missionId);
    const refused = await stack.api.startMission(key, { skill: 'weather-report', objective: 'x' }).catch((e: Error) => e.message);
    assert.match(String(refused), /422/, 'a draft does not run until the owner activates it');
  });

  it('does not warn when the new skill is unlike every existing one', async () => {
    const md =
      '---\nname: packing-list\ndescription: Writes a packing list for a holiday from its length and activities.\n---\nList what to pack.\n';
    const { results } = await runCalls([{ id: 'tu_new', name: 'create_skill', input: { skillMd: md } }]);
    assert.equal(results.tu_new!.isError, false, results.tu_new!.content);
    assert.equal(results.tu_new!.json.nearDuplicate, undefined);
  });

  it('update_skill appends a version, refuses a rename, an unknown skill and another user’s skill', async () => {
    const other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'someone-else' });
    await stack.api.createSkill(other, skillMd({ name: 'theirs' }));
    const revised = weatherReport.replace('report the forecast.', 'report the forecast in kilometres per hour.');
    const { missionId, results } = await runCalls([
      { id: 'tu_rev', name: 'update_skill', input: { name: 'weather-report', skillMd: revised } },
      { id: 'tu_rename', name: 'update_skill', input: { name: 'invoice-reconciler', skillMd: weatherReport } },
      { id: 'tu_missing', name: 'update_skill', input: { name: 'nothing-here', skillMd: weatherReport } },
      { id: 'tu_theirs', name: 'update_skill', input: { name: 'theirs', skillMd: skillMd({ name: 'theirs' }) } },
    ]);
    assert.equal(results.tu_rev!.isError, false, results.tu_rev!.content);
    assert.equal(results.tu_rev!.json.version, 2);
    assert.equal(results.tu_rename!.isError, true);
    assert.match(results.tu_rename!.content, /may not rename.*invoice-reconciler/);
    assert.equal(results.tu_missing!.isError, true);
    assert.equal(results.tu_theirs!.isError, true);
    assert.equal(results.tu_theirs!.content.replace('theirs', 'X'), results.tu_missing!.content.replace('nothing-here', 'X'));

    const id = results.tu_rev!.json.id as string;
    const v2 = await stack.api.request('GET', `/api/v1/skills/${id}?version=2`, { key });
    assert.match(v2.body.body, /kilometres per hour/);
    assert.equal(v2.body.versionMissionId, missionId);
    const v1 = await stack.api.request('GET', `/api/v1/skills/${id}/export?version=1`, { key });
    assert.equal(v1.body, weatherReport, 'the first version is kept as it was');
    const theirs = await stack.api.request('GET', '/api/v1/skills', { key: other });
    assert.deepEqual(
      theirs.body.items.map((s: { version: number }) => s.version),
      [1],
    );
  });
});

function safeJson(text: string) {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

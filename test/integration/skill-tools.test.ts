import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { buildZip } from '../../testkit/zip-builder.ts';

describe('skill system tools in a mission', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'tool-user' });
    const zip = buildZip([
      {
        path: 'guided/SKILL.md',
        data: '---\nname: guided\ndescription: Follows its guide.\nmax-turns: 3\n---\nRead references/guide.md first.\n',
      },
      { path: 'guided/references/guide.md', data: '# Guide\n\nAlways measure twice.\n', deflate: true },
    ]);
    const res = await fetch(`${stack.url}/api/v1/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
      body: zip,
    });
    assert.equal(res.status, 201, await res.text());
    await stack.api.createSkill(key, skillMd({ name: 'helper', body: 'Helper procedure: count to three.' }));
    const quarantined = await stack.api.request('POST', '/api/v1/skills/import', {
      key,
      raw: skillMd({ name: 'unreviewed' }),
      headers: { 'content-type': 'text/markdown' },
    });
    assert.equal(quarantined.status, 201);
    const other = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'someone-else' });
    await stack.api.createSkill(other, skillMd({ name: 'theirs', body: 'Secret procedure.' }));
  });
  after(() => stack.stop());

  it('reads files of the running skill’s bundle (confined to it) and loads the user’s other active skills', async () => {
    const uses = [
      { id: 'tu_guide', name: 'read_skill_asset', input: { path: 'references/guide.md' } },
      { id: 'tu_escape', name: 'read_skill_asset', input: { path: '../helper/SKILL.md' } },
      { id: 'tu_missing', name: 'read_skill_asset', input: { path: 'references/none.md' } },
      { id: 'tu_helper', name: 'use_skill', input: { name: 'helper' } },
      { id: 'tu_unreviewed', name: 'use_skill', input: { name: 'unreviewed' } },
      { id: 'tu_theirs', name: 'use_skill', input: { name: 'theirs' } },
    ];
    stack.model.enqueue({ reply: { toolUses: uses } }, { reply: { text: 'Measured twice.' } });
    const { id } = await stack.api.startMission(key, { skill: 'guided', objective: 'Follow the guide.' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');

    assert.ok(stack.model.requests[0]!.toolNames.includes('read_skill_asset') && stack.model.requests[0]!.toolNames.includes('use_skill'));
    const results = Object.fromEntries(stack.model.requests[1]!.toolResults.map((r) => [r.toolUseId, r]));
    assert.match(results.tu_guide!.content, /Always measure twice/);
    assert.equal(results.tu_guide!.isError, false);
    assert.equal(results.tu_escape!.isError, true);
    assert.match(results.tu_escape!.content, /not inside the skill folder/);
    assert.equal(results.tu_missing!.isError, true);
    assert.match(results.tu_missing!.content, /SKILL\.md, references\/guide\.md/, 'the error lists the files there are');
    assert.match(results.tu_helper!.content, /Helper procedure: count to three/);
    assert.equal(results.tu_unreviewed!.isError, true, 'a quarantined skill cannot be loaded');
    assert.equal(results.tu_theirs!.isError, true);
    assert.doesNotMatch(results.tu_theirs!.content, /Secret/);
    assert.equal(
      results.tu_theirs!.content.replace('theirs', 'X'),
      results.tu_unreviewed!.content.replace('unreviewed', 'X'),
      'another user’s skill reads like a missing one',
    );
  });
});

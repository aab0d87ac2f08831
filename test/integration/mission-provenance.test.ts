import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { SkillVersionSearchAttribute } from '../../contracts/mission.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('mission provenance: the exact skill bytes a mission ran and loaded', () => {
  let stack: TestStack;
  let key: string;
  // The Temporal server is shared by every test file: a name of its own keeps the search to this file's runs.
  const main = `prov-${randomBytes(3).toString('hex')}`;
  const skills: Record<string, { id: string }> = {};
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(undefined, { tenantId: 'acme', userId: 'prov' });
    skills.main = await stack.api.createSkill(key, skillMd({ name: main, body: 'First procedure.' }));
    skills.helper = await stack.api.createSkill(key, skillMd({ name: 'helper', body: 'Helper procedure.' }));
  });
  after(() => stack.stop());

  const bundleOf = async (id: string, version: number) =>
    (await stack.api.request('GET', `/api/v1/skills/${id}?version=${version}`, { key })).body.bundleSha256 as string;

  it('GET /missions/:id names the main skill and each skill loaded with use_skill, once, by id, version and bundle sha256', async () => {
    const res = await stack.api.request('POST', `/api/v1/skills/${skills.main!.id}/versions`, {
      key,
      raw: skillMd({ name: main, body: 'Second procedure.' }),
      headers: { 'content-type': 'text/markdown' },
    });
    assert.equal(res.status, 201);
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_a', name: 'use_skill', input: { name: 'helper' } },
            { id: 'tu_b', name: 'use_skill', input: { name: 'helper' } },
          ],
        },
      },
      { reply: { text: 'done' } },
    );
    const { id } = await stack.api.startMission(key, { skill: main, objective: 'Use the helper.' });
    assert.equal((await stack.api.waitForEnd(key, id)).status, 'completed');
    const mission = (await stack.api.getMission(key, id)).body;
    assert.deepEqual(mission.provenance, [
      { role: 'ran', skillId: skills.main!.id, name: main, version: 2, bundleSha256: await bundleOf(skills.main!.id, 2) },
      { role: 'loaded', skillId: skills.helper!.id, name: 'helper', version: 1, bundleSha256: await bundleOf(skills.helper!.id, 1) },
    ]);
    assert.match(mission.provenance[0].bundleSha256, /^[0-9a-f]{64}$/);

    const d = await stack.handle(id).describe();
    assert.equal(d.typedSearchAttributes.get(SkillVersionSearchAttribute), '2');
  });

  it('operators find every run of one version by CadenzaSkill and CadenzaSkillVersion', async () => {
    stack.model.enqueue({ reply: { text: 'v2 again' } });
    const { id: second } = await stack.api.startMission(key, { skill: main, objective: 'Again.' });
    assert.equal((await stack.api.waitForEnd(key, second)).status, 'completed');
    const list = async (version: string) => {
      const ids: string[] = [];
      for await (const w of stack.temporal.workflow.list({ query: `CadenzaSkill = '${main}' AND CadenzaSkillVersion = '${version}'` }))
        ids.push(w.workflowId);
      return ids.sort();
    };
    // Visibility is eventually consistent: wait, with a deadline, until both runs are indexed.
    const deadline = Date.now() + 20_000;
    let found = await list('2');
    while (found.length < 2 && Date.now() < deadline) {
      await new Promise((ok) => setTimeout(ok, 200));
      found = await list('2');
    }
    assert.equal(found.length, 2, `both runs of version 2 are found: ${found.join(', ')}`);
    assert.ok(found.includes(`mission-${second}`));
    assert.deepEqual(await list('1'), [], 'no run of version 1');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RecordedRequest } from '../../fake-model/fake-model-types.ts';
import { SYSTEM_TOOL_NAMES } from '../../tools/system/index.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const systemOf = (r: RecordedRequest) => r.system;
/** The app tools expected plus the system tools every mission has, sorted as the assertions compare them. */
const withSystem = (...tools: string[]) => [...tools, ...SYSTEM_TOOL_NAMES].sort();

describe('what a mission knows, may use and leaves behind', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(
      key,
      skillMd({ name: 'assistant', tools: ['lab.lookup', 'mailbox.search_mail', 'crm.find_contact'], maxTurns: 4 }),
    );
  });
  after(() => stack.stop());

  const run = async (objective: string, workspaceCode = 'ws-1') => {
    const first = stack.model.requests.length;
    const { id } = await stack.api.startMission(key, { skill: 'assistant', objective, workspaceCode });
    const mission = await stack.api.waitForEnd(key, id);
    return { id, mission, requests: stack.model.requests.slice(first) };
  };

  it('puts the profile and the relevant memories under USER CONTEXT at the top of the system prompt, once, before any tool', async () => {
    const put = await stack.api.request('PUT', '/api/v1/profile', {
      key,
      body: {
        company: 'Fernhill Coffee Roasters',
        role: 'Head of Marketing',
        brandVoice: 'warm and plain-spoken',
        preferences: { units: 'metric' },
      },
    });
    assert.equal(put.status, 200);
    for (const content of ['Quarterly board decks go out on the first Monday of the quarter.', 'The office plant is watered on Fridays.']) {
      assert.equal((await stack.api.request('POST', '/api/v1/memories', { key, body: { content, workspaceCode: 'ws-1' } })).status, 201);
    }
    stack.model.enqueue(
      {
        reply: {
          toolUses: [
            { id: 'tu_save', name: 'save_memory', input: { content: 'The board prefers decks of ten slides or fewer.' } },
            { id: 'tu_look', name: 'lab__lookup', input: { q: 'deck' } },
          ],
        },
      },
      { reply: { text: 'Deck outline ready.' } },
    );
    const { id, mission, requests } = await run('Draft the quarterly board deck outline.');
    assert.equal(mission.status, 'completed');

    const system = systemOf(requests[0]!);
    assert.match(system, /^# USER CONTEXT/, 'the context opens the system prompt');
    for (const expected of [
      'Fernhill Coffee Roasters',
      'Head of Marketing',
      'warm and plain-spoken',
      'units: metric',
      'Quarterly board decks go out',
    ]) {
      assert.ok(system.includes(expected), `the context holds ${expected}`);
    }
    assert.ok(system.indexOf('USER CONTEXT') < system.indexOf('Skill procedure'));
    assert.equal(systemOf(requests[1]!), system, 'built once: the second call sees the very same prompt');
    assert.ok(!system.includes('ten slides'), 'a memory saved by a tool during the mission does not rewrite the context');

    const saved = await stack.api.request('GET', '/api/v1/memories?workspaceCode=ws-1', { key });
    const fact = saved.body.items.find((m: { content: string }) => m.content.includes('ten slides'));
    assert.ok(fact, 'save_memory stored the fact');
    assert.equal(fact.source, 'tool');
    assert.equal(fact.missionId, id);
  });

  it('offers a gated tool only when the user has connected its provider', async () => {
    const names = async () => {
      stack.model.enqueue({ reply: { text: 'ok' } });
      const { requests } = await run('List my tools.');
      return requests[0]!.toolNames.sort();
    };
    assert.deepEqual(await names(), withSystem('lab__lookup'), 'neither provider connected');

    assert.equal((await stack.api.request('POST', '/api/v1/integrations', { key, body: { provider: 'google' } })).status, 201);
    assert.equal(
      (await stack.api.request('POST', '/api/v1/integrations', { key, body: { provider: 'salesforce', status: 'inactive' } })).status,
      201,
    );
    assert.deepEqual(await names(), withSystem('lab__lookup', 'mailbox__search_mail'), 'only the active integration opens its tools');

    // A tool the model names anyway (it was not offered) does not run.
    const calls = stack.tools.requests.length;
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_crm', name: 'crm__find_contact', input: { name: 'Marta' } }] } },
      { reply: { text: 'no crm' } },
    );
    const { requests } = await run('Find Marta in the CRM.');
    assert.equal(stack.tools.requests.length, calls, 'the tool server was not called');
    assert.match(requests[1]!.toolResults[0]!.content, /unknown tool/);

    assert.equal(
      (await stack.api.request('POST', '/api/v1/integrations', { key, body: { provider: 'salesforce', status: 'active' } })).status,
      200,
    );
    assert.deepEqual(await names(), withSystem('crm__find_contact', 'lab__lookup', 'mailbox__search_mail'));
    assert.equal((await stack.api.request('DELETE', '/api/v1/integrations/google', { key })).status, 204);
    assert.deepEqual(await names(), withSystem('crm__find_contact', 'lab__lookup'), 'disconnecting closes the gate again');
  });

  it('leaves a memory of its result and feed rows for each tool start and end and for its end', async () => {
    stack.tools.on('lookup', () => ({ body: { cafes: 31 } }));
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_feed', name: 'lab__lookup', input: { q: 'wholesale cafes' } }] } },
      { reply: { text: 'Fernhill supplies 31 wholesale cafes across Bristol.' } },
    );
    const { id, mission } = await run('Count our wholesale cafe customers.');
    assert.equal(mission.status, 'completed');

    const feed = await stack.api.request('GET', `/api/v1/activity?missionId=${id}`, { key });
    assert.equal(feed.status, 200);
    assert.deepEqual(
      feed.body.items.map((a: { kind: string; outcome?: string }) => [a.kind, a.outcome ?? null]),
      [
        ['mission_end', 'completed'],
        ['tool_end', 'completed'],
        ['tool_start', null],
      ],
      'newest first',
    );
    const [end, toolEnd] = feed.body.items;
    assert.equal(toolEnd.tool, 'lab.lookup');
    assert.equal(toolEnd.toolUseId, 'tu_feed');
    assert.equal(typeof toolEnd.durationMs, 'number');
    assert.equal(end.details.turns, 2);
    assert.equal(end.details.resultLength, mission.result.text.length);
    assert.equal(typeof end.durationMs, 'number');

    const memories = await stack.api.request('GET', '/api/v1/memories?workspaceCode=ws-1', { key });
    const left = memories.body.items.filter(
      (m: { missionId: string | null; source: string }) => m.missionId === id && m.source === 'mission',
    );
    assert.equal(left.length, 1);
    assert.match(left[0].content, /31 wholesale cafes/);
    assert.deepEqual(left[0].tags, ['skill:assistant', 'objective:Count our wholesale cafe customers.']);

    // A later mission on a related objective retrieves it into its context; search_memory finds it too.
    stack.model.enqueue(
      { reply: { toolUses: [{ id: 'tu_search', name: 'search_memory', input: { query: 'wholesale cafe customers' } }] } },
      { reply: { text: 'ok' } },
    );
    const later = await run('How many wholesale cafe customers do we have?');
    assert.match(systemOf(later.requests[0]!), /31 wholesale cafes/);
    assert.match(later.requests[1]!.toolResults[0]!.content, /31 wholesale cafes/);
  });

  it('keeps memories to their workspace: another workspace sees only the user-wide ones', async () => {
    await stack.api.request('POST', '/api/v1/memories', {
      key,
      body: { content: 'Project Heron launch is on 4 March.', workspaceCode: 'ws-heron' },
    });
    await stack.api.request('POST', '/api/v1/memories', { key, body: { content: 'Project Heron uses the teal palette everywhere.' } });
    stack.model.enqueue({ reply: { text: 'ok' } });
    const { requests } = await run('When is the Project Heron launch?', 'ws-other');
    const system = systemOf(requests[0]!);
    assert.ok(!system.includes('4 March'), 'a memory of another workspace is not retrieved');
    assert.ok(system.includes('teal palette'), 'a user-wide memory is');
  });
});

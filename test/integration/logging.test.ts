import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

type Line = Record<string, unknown> & { level: string; msg: string };

describe('what the running stack logs', () => {
  const lines: string[] = [];
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { LOG_LEVEL: 'info' }, logWrite: (l) => lines.push(l) });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'chatty', maxTurns: 2 }));
  });
  after(() => stack.stop());

  const parsed = () => lines.map((l) => JSON.parse(l) as Line);
  const requests = () => parsed().filter((l) => l.msg === 'request');

  it('logs each request with method, route pattern, status, duration and request id, never a body or a key', async () => {
    const objective = 'A secret plan nobody may read in the logs.';
    const { id } = await stack.api.startMission(key, { skill: 'chatty', objective });
    const detail = await stack.api.getMission(key, id);
    const missing = await stack.api.request('GET', '/api/v1/nowhere', { key });
    const refused = await stack.api.request('GET', '/api/v1/missions', { key: 'not-a-key' });
    assert.equal(refused.status, 401);

    const find = (requestId: string | null) => requests().find((l) => l.requestId === requestId);
    const get = find(detail.headers.get('x-request-id'));
    assert.ok(get, 'the GET is logged under the request id it answered with');
    assert.equal(get.level, 'info');
    assert.equal(get.method, 'GET');
    assert.equal(get.route, '/api/v1/missions/:id', 'the pattern, not the URL with the id');
    assert.equal(get.status, 200);
    assert.equal(typeof get.durationMs, 'number');
    assert.equal(find(missing.headers.get('x-request-id'))?.status, 404);
    assert.equal(find(missing.headers.get('x-request-id'))?.route, null);
    assert.equal(find(refused.headers.get('x-request-id'))?.status, 401);
    const post = requests().find((l) => l.method === 'POST' && l.route === '/api/v1/missions');
    assert.equal(post?.status, 202);

    const all = lines.join('\n');
    assert.ok(!all.includes(objective), 'no request body in the logs');
    assert.ok(!all.includes(key), 'no API key in the logs');
    assert.ok(!all.includes(stack.config.adminKey!), 'no admin key in the logs');
    assert.ok(!/bearer\s+\w{6,}/i.test(all), 'no bearer token in the logs');
  });

  /** The mission's end line: written after the end's activity answered, so it may come a moment after the result. */
  async function endLine(id: string): Promise<Line> {
    const deadline = Date.now() + 10_000;
    let end: Line | undefined;
    while (!(end = parsed().find((l) => l.msg === 'mission ended' && l.missionId === id)) && Date.now() < deadline) {
      await new Promise((ok) => setTimeout(ok, 100));
    }
    assert.ok(end, 'mission ended is logged');
    return end;
  }

  it("logs each mission's start and end: id, skill, status, turns, duration", async () => {
    stack.model.enqueue({ reply: { text: 'done in one' } });
    const { id } = await stack.api.startMission(key, { skill: 'chatty', objective: 'Finish.' });
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'completed');
    const started = parsed().find((l) => l.msg === 'mission started' && l.missionId === id);
    assert.ok(started, 'mission started is logged');
    assert.equal(started.level, 'info');
    assert.equal(started.skill, 'chatty');
    const end = await endLine(id);
    assert.equal(end.level, 'info');
    assert.equal(end.skill, 'chatty');
    assert.equal(end.status, 'completed');
    assert.equal(end.turns, 1);
    assert.equal(end.skillVersion, 1);
    assert.equal(end.durationMs, Date.parse(ended.finishedAt) - Date.parse(ended.createdAt), 'the duration its row records');
  });

  it("logs a failed mission's end with its phase, the replies it had and the duration its row records", async () => {
    stack.model.enqueue({ status: 400, message: 'messages: bad block' });
    const { id } = await stack.api.startMission(key, { skill: 'chatty', objective: 'Fail at once.' });
    const ended = await stack.api.waitForEnd(key, id);
    assert.equal(ended.status, 'failed');
    const end = await endLine(id);
    assert.equal(end.skill, 'chatty');
    assert.equal(end.status, 'failed');
    assert.equal(end.phase, 'model');
    assert.equal(end.turns, 0, 'no reply was received');
    assert.equal(end.durationMs, Date.parse(ended.finishedAt) - Date.parse(ended.createdAt));
  });

  it('stays quiet about what is expected: no "No workflows registered" warning from the model-call worker', () => {
    assert.deepEqual(
      parsed().filter((l) => /No workflows registered/.test(l.msg)),
      [],
    );
    for (const l of parsed()) assert.ok(['info', 'warn', 'error'].includes(l.level), `a ${l.level} line at LOG_LEVEL=info`);
  });
});

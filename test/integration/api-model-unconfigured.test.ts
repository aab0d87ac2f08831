import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

// Issue 27 item 11: without MODEL_API_KEY the provider's own endpoint cannot be reached; missions used to start and
// fail minutes later after three attempts each.
describe('a start without a model key', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ worker: false, env: { MODEL_API_KEY: '', MODEL_BASE_URL: '', LOG_LEVEL: 'warn' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'keyless' }));
  });
  after(() => stack?.stop());

  it('says so at start-up, naming MODEL_API_KEY', () => {
    const warning = stack.logLines.map((l) => JSON.parse(l)).find((l) => /model_unconfigured/.test(l.msg));
    assert.ok(warning, 'a warning at start-up');
    assert.equal(warning.level, 'warn');
    assert.match(warning.msg, /MODEL_API_KEY is not set/);
  });

  it('answers POST /missions at once with 503 model_unconfigured naming MODEL_API_KEY, and starts nothing', async () => {
    const res = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'keyless', objective: 'Say hello.', workspaceCode: 'ws-1' },
    });
    assert.equal(res.status, 503, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'model_unconfigured');
    assert.match(res.body.error.message, /MODEL_API_KEY is not set/);
    assert.match(res.body.error.message, /MODEL_BASE_URL/);
    assert.deepEqual(res.body.error.details, { variable: 'MODEL_API_KEY' });
    const list = await stack.api.request('GET', '/api/v1/missions', { key });
    assert.deepEqual(list.body.items, []);
  });
});

describe('a start with MODEL_BASE_URL and no key (a local endpoint such as Ollama or the fake model)', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { MODEL_API_KEY: '' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'local-model' }));
  });
  after(() => stack?.stop());

  it('runs missions as before, with no warning', async () => {
    assert.ok(!stack.logLines.some((l) => /model_unconfigured/.test(l)));
    stack.model.enqueue({ reply: { text: 'Hello.' } });
    const { id } = await stack.api.startMission(key, { skill: 'local-model', objective: 'Say hello.' });
    const done = await stack.api.waitForEnd(key, id);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.equal(done.result.text, 'Hello.');
  });
});

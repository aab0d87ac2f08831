import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ALL_CAPABILITIES } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../testkit/webhook-receiver.ts';

/** Webhooks end to end: a mission's end reaches the owner's receiver signed in the Standard Webhooks format. */
describe('webhooks: delivery', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: '127.0.0.1' } });
    receiver = await startWebhookReceiver();
    key = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 't-hooks', userId: 'ann' });
    await stack.api.createSkill(key, skillMd({ name: 'reporter' }));
  });
  after(async () => {
    await receiver.close();
    await stack.stop();
  });

  const createHook = async (events: string[], as = key, url = receiver.url) => {
    const res = await stack.api.request('POST', '/api/v1/webhooks', { key: as, body: { url, events } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string; secret: string };
  };
  const deliveries = async (id: string, as = key) =>
    (await stack.api.request('GET', `/api/v1/webhooks/${id}/deliveries`, { key: as })).body.items as Array<Record<string, unknown>>;

  it("signs a mission's end with the standardwebhooks library, thin and owner-private", async () => {
    const hook = await createHook(['mission.completed', 'mission.failed']);
    assert.match(hook.secret, /^whsec_/);
    // Bob's endpoint takes the same events: Ann's missions never reach it.
    const bob = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 't-hooks', userId: 'bob' });
    const bobs = await startWebhookReceiver();
    try {
      await createHook(['mission.completed'], bob, bobs.url);
      stack.model.enqueue({ reply: { text: 'The report, secret content.' } });
      const { id } = await stack.api.startMission(key, { skill: 'reporter', objective: 'Report.' });
      await stack.api.waitForEnd(key, id);

      const [got] = await receiver.waitFor((all) => all.some((r) => r.body.includes(id)));
      const payload = receiver.verify(got!, hook.secret);
      assert.equal(payload.type, 'mission.completed');
      assert.deepEqual(payload.data, {
        missionId: id,
        status: 'completed',
        links: { mission: `/api/v1/missions/${id}`, events: `/api/v1/missions/${id}/events` },
      });
      assert.ok(!got!.body.includes('secret content'), 'the content stays behind the API');
      assert.match(got!.id, /^msg_/);
      assert.throws(() => receiver.verify(got!, `whsec_${Buffer.alloc(24, 7).toString('base64')}`), /signature/i);

      const [listed] = await deliveries(hook.id);
      assert.equal(listed!.id, got!.id);
      assert.equal(listed!.status, 'delivered');
      assert.equal(listed!.attempts, 1);
      assert.equal(listed!.lastStatusCode, 200);
      assert.equal(typeof listed!.lastDurationMs, 'number');
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(bobs.received.length, 0, "bob's endpoint got nothing of ann's");
    } finally {
      await bobs.close();
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../testkit/webhook-receiver.ts';
import { spawnedWorkers } from '../helpers/worker-process.ts';

describe('webhooks: a worker killed (SIGKILL) during a delivery', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  const workers = spawnedWorkers();
  before(async () => {
    stack = await startTestStack({ worker: false, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: '127.0.0.1' } });
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await workers.killAll();
    await receiver.close();
    await stack.stop();
  });

  it('the next worker delivers it again with the same webhook-id, and the endpoint goes on', async () => {
    const key = await stack.api.newKey();
    // The first request is left unanswered: the worker sending it dies with it open.
    receiver.answer((_r, i) => (i === 0 ? 'hang' : 200));
    const first = await workers.spawn(stack.env);
    const hook = (await stack.api.request('POST', '/api/v1/webhooks', { key, body: { url: receiver.url, events: ['mission.completed'] } }))
      .body as { id: string; secret: string };
    const sent = (await stack.api.request('POST', `/api/v1/webhooks/${hook.id}/test`, { key })).body.id as string;
    await receiver.waitFor((r) => r.length === 1);
    assert.notEqual(await first.kill('SIGKILL'), 0);

    await workers.spawn(stack.env);
    const all = await receiver.waitFor((r) => r.length === 2, 60_000);
    assert.deepEqual(
      all.map((r) => r.id),
      [sent, sent],
      'at least once, and with the one id receivers dedupe by',
    );
    assert.equal(receiver.verify(all[1]!, hook.secret).type, 'webhook.test');
    const next = (await stack.api.request('POST', `/api/v1/webhooks/${hook.id}/test`, { key })).body.id as string;
    assert.equal((await receiver.waitFor((r) => r.length === 3))[2]!.id, next);
    const [, d] = (await stack.api.request('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { key })).body.items;
    assert.deepEqual([d.id, d.status, d.attempts], [sent, 'delivered', 1], 'the killed attempt recorded nothing; the second one delivered');
  });
});

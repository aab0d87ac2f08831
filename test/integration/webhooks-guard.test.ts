import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ALL_CAPABILITIES } from '../../testkit/api-client.ts';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { runCli } from '../helpers/cli-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../testkit/webhook-receiver.ts';
import { allowList } from '../../webhooks/address-guard.ts';
import { sendWebhook } from '../../webhooks/send.ts';

/**
 * Webhooks' refusals: URLs toward private networks (at registration and at every delivery), bad bodies, other owners'
 * endpoints, and a receiver failing for the whole retry window (a short one: WEBHOOK_RETRY_HOURS=0.002, 7.2 s).
 */
describe('webhooks: refusals', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let key: string;
  before(async () => {
    stack = await startTestStack({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: '127.0.0.1', WEBHOOK_RETRY_HOURS: '0.002' } });
    receiver = await startWebhookReceiver();
    key = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 't-guard', userId: 'ann' });
  });
  after(async () => {
    await receiver.close();
    await stack.stop();
  });

  const create = (body: Record<string, unknown>, as = key) => stack.api.request('POST', '/api/v1/webhooks', { key: as, body });
  const fieldsOf = (res: { body: { error?: { details?: { fields?: Array<{ field: string }> } } } }) =>
    (res.body.error?.details?.fields ?? []).map((f) => f.field);
  const waitDisabled = async (id: string, ms: number) => {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
      const state = (await stack.api.request('GET', `/api/v1/webhooks/${id}`, { key })).body;
      if (state.disabled) return state.disabled as { reason: string };
    }
    throw new Error('the endpoint was not disabled');
  };

  it('refuses loopback, private, link-local, metadata and non-https URLs with a 400 naming url', async () => {
    for (const url of [
      'http://10.0.0.7/hook',
      'http://192.168.1.1/hook',
      'http://127.0.0.2/hook',
      'http://[::1]/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::ffff:169.254.169.254]/',
      'https://[fd00:ec2::254]/',
      'http://user:pw@127.0.0.1/hook',
      'ftp://127.0.0.1/hook',
      'not a url',
    ]) {
      const res = await create({ url, events: ['mission.completed'] });
      assert.equal(res.status, 400, `${url}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(fieldsOf(res), ['url'], url);
    }
    const unknownEvent = await create({ url: receiver.url, events: ['mission.exploded'] });
    assert.equal(unknownEvent.status, 400);
    assert.deepEqual(fieldsOf(unknownEvent), ['events.0']);
    assert.deepEqual(fieldsOf(await create({ url: receiver.url, events: [] })), ['events']);
  });

  it('checks the address again at delivery: a URL now toward a refused address is never called', async () => {
    const hook = (await create({ url: receiver.url, events: ['mission.completed'] })).body;
    // As if its name resolved elsewhere since: the stored URL now points at an address the allow-list leaves out.
    await stack.db.updateTable('webhooks').set({ url: 'http://127.0.0.2:9/hook' }).where('id', '=', hook.id).execute();
    const sent = (await stack.api.request('POST', `/api/v1/webhooks/${hook.id}/test`, { key })).body.id;
    let d: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && !(d?.attempts as number); i++) {
      await new Promise((r) => setTimeout(r, 100));
      [d] = (await stack.api.request('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { key })).body.items;
    }
    assert.equal(d!.id, sent);
    assert.match(String(d!.lastError), /^refused: 127\.0\.0\.2 is a loopback, private, link-local or reserved address/);
    assert.equal(d!.lastStatusCode, null);
  });

  it("the connection's own DNS lookup refuses a name that resolves to a refused address (rebinding after the check)", async () => {
    const port = new URL(receiver.url).port;
    const before = receiver.received.length;
    const out = await sendWebhook(new URL(`http://localhost:${port}/hook`), {}, '{}', allowList([]));
    assert.match(String(out.error), /^refused: .* is a loopback, private, link-local or reserved address/);
    assert.equal(out.statusCode, undefined);
    assert.equal(receiver.received.length, before, 'never connected');
    const allowed = await sendWebhook(new URL(`http://127.0.0.1:${port}/hook`), {}, '{}', allowList(['127.0.0.1']));
    assert.equal(allowed.statusCode, 200);
  });

  it('a receiver failing for the whole retry window disables the endpoint with the reason', async () => {
    const down = await startWebhookReceiver();
    try {
      down.answer(() => 503);
      const hook = (await create({ url: down.url, events: ['mission.completed'] })).body;
      const sent = (await stack.api.request('POST', `/api/v1/webhooks/${hook.id}/test`, { key })).body.id;
      const disabled = await waitDisabled(hook.id, 30_000);
      assert.match(disabled.reason, /^no attempt succeeded within WEBHOOK_RETRY_HOURS \(0\.002 h, \d+ attempts; last: HTTP 503\)$/);
      assert.ok(down.received.length >= 3, `retried with backoff (${down.received.length} attempts)`);
      assert.ok(down.received.every((r) => r.id === sent));
      const [d] = (await stack.api.request('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { key })).body.items;
      assert.deepEqual([d.status, d.nextAttemptAt], ['failed', null]);
    } finally {
      await down.close();
    }
  });

  it("another owner's endpoint is a 404 on every route", async () => {
    const hook = (await create({ url: receiver.url, events: ['mission.completed'] })).body;
    const other = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 't-guard', userId: 'bob' });
    for (const [method, path] of [
      ['GET', ''],
      ['GET', '/deliveries'],
      ['POST', '/rotate-secret'],
      ['POST', '/test'],
      ['POST', '/deliveries/msg_x/redeliver'],
      ['DELETE', ''],
    ] as const) {
      const res = await stack.api.request(method, `/api/v1/webhooks/${hook.id}${path}`, { key: other });
      assert.equal(res.status, 404, `${method} ${path}`);
    }
    assert.deepEqual((await stack.api.request('GET', '/api/v1/webhooks', { key: other })).body.items, []);
    assert.equal((await stack.api.request('DELETE', `/api/v1/webhooks/${hook.id}`, { key })).status, 204);
  });

  it('the cadenza CLI creates, tests, lists deliveries, rotates and deletes an endpoint through the API', async () => {
    const env = { CADENZA_URL: stack.url, CADENZA_API_KEY: key, CADENZA_ADMIN_KEY: '', XDG_CONFIG_HOME: '/nonexistent' };
    const made = await runCli(['webhooks', 'create', receiver.url, '--events', 'mission.completed,mission.idle', '--json'], env);
    assert.equal(made.code, 0, made.stderr);
    const { id, secret } = JSON.parse(made.stdout) as { id: string; secret: string };
    assert.match(secret, /^whsec_/);
    const sent = JSON.parse((await runCli(['webhooks', 'test', id, '--json'], env)).stdout).id as string;
    const [got] = (await receiver.waitFor((r) => r.some((x) => x.id === sent))).filter((x) => x.id === sent);
    assert.equal(receiver.verify(got!, secret).type, 'webhook.test');
    assert.match((await runCli(['webhooks', 'deliveries', id], env)).stdout, new RegExp(sent));
    assert.match((await runCli(['webhooks', 'rotate-secret', id], env)).stdout, /secret: whsec_/);
    const bad = await runCli(['webhooks', 'create', 'http://10.1.2.3/hook', '--events', 'mission.completed'], env);
    assert.equal(bad.code, 5, 'refused by the API');
    assert.match(bad.stderr, /url/);
    assert.equal((await runCli(['webhooks', 'delete', id], env)).code, 0);
    assert.equal((await runCli(['webhooks', 'get', id], env)).code, 4, 'not found');
  });
});

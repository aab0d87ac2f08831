import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import proto from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { webhookWorkflowId } from '../../contracts/webhooks.ts';
import { after, before, describe, it } from 'node:test';
import { ALL_CAPABILITIES } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../testkit/webhook-receiver.ts';
import { until } from '../../testkit/until.ts';

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

      // Within 10 s: woken by the completion itself, not by the sweep (deliveries pending 15 s or more).
      const [got] = await receiver.waitFor((all) => all.some((r) => r.body.includes(id)), 10_000);
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

  const sendTest = async (id: string) => {
    const res = await stack.api.request('POST', `/api/v1/webhooks/${id}/test`, { key });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const hookState = async (id: string) => (await stack.api.request('GET', `/api/v1/webhooks/${id}`, { key })).body;

  it('retries through a receiver that redirects, fails, then recovers: same webhook-id, events in order', async () => {
    const receiver2 = await startWebhookReceiver();
    try {
      // The first two attempts are refused (a redirect is not followed; a 500), then the receiver is back.
      receiver2.answer((_r, i) => (i === 0 ? { status: 302, body: 'see elsewhere' } : i === 1 ? 500 : 200));
      const hook = await createHook(['mission.completed'], key, receiver2.url);
      const first = await sendTest(hook.id);
      const second = await sendTest(hook.id);
      const all = await receiver2.waitFor((r) => r.filter((x) => x.id === second).length === 1, 60_000);
      assert.deepEqual(
        all.map((r) => r.id),
        [first, first, first, second],
        'the first event retried with one id; the second waited for it',
      );
      for (const r of all) assert.equal(receiver2.verify(r, hook.secret).type, 'webhook.test');
      const [d2, d1] = await deliveries(hook.id);
      assert.deepEqual([d1!.id, d1!.status, d1!.attempts, d1!.lastStatusCode], [first, 'delivered', 3, 200]);
      assert.deepEqual([d2!.id, d2!.status, d2!.attempts], [second, 'delivered', 1]);
      assert.equal(receiver2.received.filter((r) => r.id === first).length, 3);

      // The endpoint's workflow so far (retries, a wake-up, two deliveries) replays against the current code;
      // RECORD_HISTORIES=1 keeps it as the fixture test/integration/replay.test.ts replays.
      const history = await stack.temporal.workflow.getHandle(webhookWorkflowId(hook.id)).fetchHistory();
      await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.CADENZA_TEST_BUNDLE! } }, history, 'webhook-retries');
      if (process.env.RECORD_HISTORIES)
        writeFileSync(
          fileURLToPath(new URL('../fixtures/histories/webhook-retries.pb', import.meta.url)),
          proto.temporal.api.history.v1.History.encode(history).finish(),
        );
    } finally {
      await receiver2.close();
    }
  });

  /** The endpoint workflow's history, its deliverWebhook activities and their events (the wake-ups' signals aside). */
  const deliverActivities = async (hookId: string) => {
    const history = await stack.temporal.workflow.getHandle(webhookWorkflowId(hookId)).fetchHistory();
    const events = history.events ?? [];
    const runs = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverWebhook').length;
    const activityEvents = events.filter((e) =>
      [
        e.activityTaskScheduledEventAttributes,
        e.activityTaskStartedEventAttributes,
        e.activityTaskCompletedEventAttributes,
        e.activityTaskFailedEventAttributes,
      ].some(Boolean),
    ).length;
    return { history, runs, activityEvents };
  };

  it('a burst of deliveries to one endpoint arrives in order, many of them sent by one activity', async () => {
    const burst = await startWebhookReceiver();
    try {
      // The first answer takes 2 s: the other events are recorded meanwhile, and the run that sent it sends them too.
      burst.answer((_r, i) => (i === 0 ? { status: 200, delayMs: 2_000 } : 200));
      const hook = await createHook(['mission.completed'], key, burst.url);
      const sent: string[] = [];
      for (let i = 0; i < 20; i++) sent.push(await sendTest(hook.id));
      const all = await burst.waitFor((r) => r.length === sent.length);
      assert.deepEqual(
        all.map((r) => r.id),
        sent,
        'each once, in the order recorded',
      );
      const listed = await deliveries(hook.id);
      assert.deepEqual(
        listed.map((d) => [d.status, d.attempts]),
        sent.map(() => ['delivered', 1]),
      );
      // One activity per delivery would be 20 of them, and 60 activity events in the history.
      const { runs, activityEvents } = await deliverActivities(hook.id);
      assert.ok(runs <= 2, `${runs} deliverWebhook activities for 20 deliveries`);
      assert.ok(activityEvents <= 9, `${activityEvents} activity events in the history for 20 deliveries`);
    } finally {
      await burst.close();
    }
  });

  it('a receiver failing in the middle of a run: that delivery is retried after its backoff, the next ones wait for it', async () => {
    const flaky = await startWebhookReceiver();
    try {
      // The run sends s0 (slowly, so s1–s5 are recorded meanwhile), s1, s2, then s3 fails twice before it succeeds.
      flaky.answer((_r, i) => (i === 0 ? { status: 200, delayMs: 2_000 } : i === 3 ? 500 : i === 4 ? 503 : 200));
      const hook = await createHook(['mission.completed'], key, flaky.url);
      const sent: string[] = [];
      for (let i = 0; i < 6; i++) sent.push(await sendTest(hook.id));
      const s3 = sent[3]!;
      const [, , , failed] = await flaky.waitFor((r) => r.length === 4);
      assert.equal(failed!.id, s3);
      // Its failed attempt is on record with when it is tried next: the backoff's first step, 1 s.
      let pending: Record<string, unknown> | undefined;
      for (let i = 0; i < 40 && !pending; i++) {
        pending = (await deliveries(hook.id)).find((d) => d.id === s3 && d.lastStatusCode === 500);
        if (!pending) await new Promise((r) => setTimeout(r, 25));
      }
      assert.deepEqual([pending?.status, pending?.attempts], ['pending', 1]);
      const retryAt = Date.parse(String(pending!.nextAttemptAt));
      assert.ok(retryAt - failed!.receivedAt >= 900, 'the next attempt is a backoff away');

      const all = await flaky.waitFor((r) => r.length === 8, 30_000);
      assert.deepEqual(
        all.map((r) => r.id),
        [sent[0], sent[1], sent[2], s3, s3, s3, sent[4], sent[5]],
        'the failed delivery retried with its id; the later ones waited for it',
      );
      assert.ok(all[4]!.receivedAt >= retryAt - 50, 'not before its next-attempt time');
      assert.ok(all[4]!.receivedAt - all[3]!.receivedAt >= 950, 'second attempt 1 s after the first');
      assert.ok(all[5]!.receivedAt - all[4]!.receivedAt >= 1_950, 'third attempt 2 s after the second: the backoff went on');
      const byId = new Map((await deliveries(hook.id)).map((d) => [d.id, d]));
      assert.deepEqual(
        sent.map((id) => [byId.get(id)!.status, byId.get(id)!.attempts]),
        [
          ['delivered', 1],
          ['delivered', 1],
          ['delivered', 1],
          ['delivered', 3],
          ['delivered', 1],
          ['delivered', 1],
        ],
      );

      // The run, its recorded failure, the timer and the retrying activity replay against the current code;
      // RECORD_HISTORIES=1 keeps it as a fixture test/integration/replay.test.ts replays.
      const { history } = await deliverActivities(hook.id);
      await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.CADENZA_TEST_BUNDLE! } }, history, 'webhook-run-failure');
      if (process.env.RECORD_HISTORIES)
        writeFileSync(
          fileURLToPath(new URL('../fixtures/histories/webhook-run-failure.pb', import.meta.url)),
          proto.temporal.api.history.v1.History.encode(history).finish(),
        );
    } finally {
      await flaky.close();
    }
  });

  it('shows a pending delivery with its last status code and next retry, then redelivers a delivered one with the same id', async () => {
    const receiver3 = await startWebhookReceiver();
    try {
      receiver3.answer((_r, i) => (i < 2 ? 503 : 200));
      const hook = await createHook(['mission.completed'], key, receiver3.url);
      const id = await sendTest(hook.id);
      await receiver3.waitFor((r) => r.length >= 1);
      let pending: Record<string, unknown> | undefined;
      for (let i = 0; i < 50 && !pending; i++) {
        const [d] = await deliveries(hook.id);
        if (d?.status === 'pending' && d.lastStatusCode === 503) pending = d;
        else await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(pending, 'the pending delivery shows the failed attempt');
      assert.ok(Date.parse(String(pending.nextAttemptAt)) > Date.parse(String(pending.createdAt)), 'and when it is tried next');

      await receiver3.waitFor((r) => r.length === 3);
      const res = await stack.api.request('POST', `/api/v1/webhooks/${hook.id}/deliveries/${id}/redeliver`, { key });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const all = await receiver3.waitFor((r) => r.length === 4);
      assert.equal(all[3]!.id, id, 'redelivered with the same webhook-id');
      const unknown = await stack.api.request('POST', `/api/v1/webhooks/${hook.id}/deliveries/msg_nope/redeliver`, { key });
      assert.equal(unknown.status, 404);
    } finally {
      await receiver3.close();
    }
  });

  it('signs with the old and the new secret during a rotation; the secret is never shown again', async () => {
    const hook = await createHook(['mission.completed']);
    assert.equal((await hookState(hook.id)).secret, undefined);
    const rotated = await stack.api.request('POST', `/api/v1/webhooks/${hook.id}/rotate-secret`, { key });
    assert.equal(rotated.status, 200);
    assert.notEqual(rotated.body.secret, hook.secret);
    assert.ok(Date.parse(rotated.body.previousSecretExpiresAt) > Date.now() + 23 * 3_600_000);
    const id = await sendTest(hook.id);
    const [got] = (await receiver.waitFor((all) => all.some((r) => r.id === id))).filter((r) => r.id === id);
    assert.equal(got!.signature.split(' ').length, 2, 'two v1 signatures');
    assert.equal(receiver.verify(got!, rotated.body.secret).type, 'webhook.test');
    assert.equal(receiver.verify(got!, hook.secret).type, 'webhook.test');
  });

  it('a receiver answering 410 disables the endpoint with the reason', async () => {
    const gone = await startWebhookReceiver();
    try {
      gone.answer(() => 410);
      const hook = await createHook(['mission.completed'], key, gone.url);
      const id = await sendTest(hook.id);
      let state = await hookState(hook.id);
      for (let i = 0; i < 100 && !state.disabled; i++) {
        await new Promise((r) => setTimeout(r, 100));
        state = await hookState(hook.id);
      }
      assert.equal(state.disabled?.reason, 'the receiver answered 410 Gone');
      assert.equal(gone.received.length, 1, 'no retry after a 410');
      const [d] = await deliveries(hook.id);
      assert.deepEqual([d!.id, d!.status, d!.lastStatusCode], [id, 'failed', 410]);
      const again = await stack.api.request('POST', `/api/v1/webhooks/${hook.id}/test`, { key });
      assert.equal(again.status, 409);
      assert.match(again.body.error.message, /disabled/);
    } finally {
      await gone.close();
    }
  });

  it('a failed, a cancelled and an idle mission each reach an endpoint that takes their event, in the order recorded', async () => {
    const events = await startWebhookReceiver();
    try {
      const hook = await createHook(['mission.failed', 'mission.cancelled', 'mission.idle'], key, events.url);
      stack.model.enqueue({ status: 400, message: 'bad request' });
      const failed = (await stack.api.startMission(key, { skill: 'reporter', objective: 'Fail.' })).id;
      await stack.api.waitForEnd(key, failed);
      // Each within 10 s of its record: woken by the activity that wrote it, not by the sweep (15 s or more).
      await events.waitFor((r) => r.length === 1, 10_000);
      stack.model.enqueue({ hang: true });
      const asked = stack.model.requests.length;
      const cancelled = (await stack.api.startMission(key, { skill: 'reporter', objective: 'Wait.' })).id;
      await stack.model.waitFor(() => stack.model.requests.length > asked);
      assert.equal((await stack.api.request('POST', `/api/v1/missions/${cancelled}/cancel`, { key })).status, 202);
      await stack.api.waitForEnd(key, cancelled);
      await events.waitFor((r) => r.length === 2, 10_000);
      stack.model.enqueue({ reply: { text: 'Hello.' } });
      const session = (await stack.api.startMission(key, { skill: 'reporter', objective: 'Talk.', session: true })).id;
      await until(async () => (await stack.api.getMission(key, session)).body.status === 'idle', { what: 'the session idle' });
      const all = await events.waitFor((r) => r.length === 3, 10_000);
      assert.deepEqual(
        all.map((r) => {
          const p = events.verify(r, hook.secret);
          return [p.type, p.data.missionId, p.data.status];
        }),
        [
          ['mission.failed', failed, 'failed'],
          ['mission.cancelled', cancelled, 'cancelled'],
          ['mission.idle', session, 'idle'],
        ],
      );
      await stack.api.request('POST', `/api/v1/missions/${session}/close`, { key });
    } finally {
      await events.close();
    }
  });

  it('an approval request and a schedule run that failed reach an endpoint that takes them', async () => {
    const events = await startWebhookReceiver();
    try {
      const hook = await createHook(['approval.requested', 'schedule.run_failed'], key, events.url);
      // lab.wipe needs approval in its app.yml.
      await stack.api.createSkill(key, skillMd({ name: 'wiper', tools: ['lab.wipe'], maxTurns: 2 }));
      stack.model.enqueue({ reply: { toolUses: [{ id: 'tu_w', name: 'lab__wipe', input: {} }] } }, { reply: { text: 'Not wiped.' } });
      const mission = (await stack.api.startMission(key, { skill: 'wiper', objective: 'Wipe.' })).id;
      const [asked] = await events.waitFor((r) => r.length === 1);
      const approval = events.verify(asked!, hook.secret);
      assert.equal(approval.type, 'approval.requested');
      assert.deepEqual([approval.data.missionId, approval.data.toolUseId, approval.data.status], [mission, 'tu_w', 'pending']);
      await stack.api.request('POST', `/api/v1/missions/${mission}/tools/tu_w/deny`, { key, body: {} });
      await stack.api.waitForEnd(key, mission);

      // A schedule whose skill is no longer active: its run fails, and says so.
      const skill = await stack.api.createSkill(key, skillMd({ name: 'retired' }));
      const schedule = await stack.api.request('POST', '/api/v1/schedules', {
        key,
        body: { skill: 'retired', objective: 'Run.', workspaceCode: 'ws-1', every: '1h', paused: true },
      });
      assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
      try {
        assert.equal((await stack.api.request('POST', `/api/v1/skills/${skill.id}/deactivate`, { key })).status, 200);
        await stack.api.request('POST', `/api/v1/schedules/${schedule.body.id}/trigger`, { key });
        const [, failed] = await events.waitFor((r) => r.length === 2, 60_000);
        const run = events.verify(failed!, hook.secret);
        assert.equal(run.type, 'schedule.run_failed');
        assert.deepEqual([run.data.scheduleId, run.data.status], [schedule.body.id, 'failed']);
        assert.match(String(run.data.reason), /./);
      } finally {
        await stack.api.request('DELETE', `/api/v1/schedules/${schedule.body.id}`, { key });
      }
    } finally {
      await events.close();
    }
  });
});

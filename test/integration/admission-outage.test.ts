import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startOwnTemporal } from '../../testkit/own-temporal.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';

/** START_SETTLE_SECONDS of this stack: a `starting` row is settled within it of becoming `starting`. */
const SETTLE_S = 6;

describe('admission slots after a Temporal outage: every starting row is settled in the background', () => {
  let temporal: Awaited<ReturnType<typeof startOwnTemporal>>;
  let stack: TestStack;
  let key: string;
  before(async () => {
    temporal = await startOwnTemporal('admission-outage');
    stack = await startTestStack({
      temporalAddress: temporal.address,
      env: { MAX_RUNNING_MISSIONS_PER_USER: '2', START_SETTLE_SECONDS: String(SETTLE_S) },
    });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'quick', maxTurns: 2 }));
  });
  after(async () => {
    await stack?.stop();
    await temporal?.close();
  });

  const post = (objective: string, idempotencyKey?: string) =>
    stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'quick', objective, workspaceCode: 'ws', ...(idempotencyKey ? { idempotencyKey } : {}) },
    });
  const rows = () => stack.db.selectFrom('missions').select(['id', 'status', 'idempotency_key']).orderBy('created_at').execute();
  const statusOf = async (id: string) =>
    (await stack.db.selectFrom('missions').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

  it('a user at MAX_RUNNING_MISSIONS_PER_USER is not blocked once Temporal is back, though nobody reads the missions', async () => {
    await temporal.stop();
    // Both admitted (the user's two slots), then their starts fail: the rows are `starting` and hold the slots.
    const keyless = await post('No key.');
    assert.equal(keyless.status, 503, JSON.stringify(keyless.body));
    const keyed = await post('Admitted with a key.', 'outage-admitted');
    assert.equal(keyed.status, 503, JSON.stringify(keyed.body));
    assert.match(keyed.body.error.message, /same idempotencyKey/);
    // Over the limit: queued, and its queued workflow could not be started either.
    const queued = await post('Queued with a key.', 'outage-queued');
    assert.equal(queued.status, 503, JSON.stringify(queued.body));
    assert.deepEqual(
      (await rows()).map((r) => [r.status, r.idempotency_key]),
      [
        ['starting', null],
        ['starting', 'outage-admitted'],
        ['queued', 'outage-queued'],
      ],
    );
    const [keylessRow, keyedRow, queuedRow] = (await rows()).map((r) => r.id);

    await temporal.start();
    const back = Date.now();
    // Nobody reads the missions: the worker's settler alone frees the slots and starts what a key promised.
    const settled = (id: string, statuses: string[], what: string, bound: number) =>
      until(async () => statuses.includes(await statusOf(id!)), { timeoutMs: bound * 1000, everyMs: 200, what });
    await settled(keylessRow!, ['failed'], 'keyless starting row failed', 3 * SETTLE_S);
    await settled(keyedRow!, ['running', 'completed'], 'keyed starting row started', 3 * SETTLE_S);
    await settled(queuedRow!, ['running', 'completed'], 'queued keyed row admitted and started', 5 * SETTLE_S);
    console.log(
      `# figure: every starting row settled after Temporal came back: ${Date.now() - back} ms (START_SETTLE_SECONDS=${SETTLE_S})`,
    );

    const failed = await stack.api.getMission(key, keylessRow!);
    assert.equal(failed.body.status, 'failed');
    assert.equal(failed.body.error.phase, 'start');
    assert.match(failed.body.error.message, /never started/);
    for (const id of [keyedRow!, queuedRow!]) assert.equal((await stack.api.waitForEnd(key, id, 90_000)).status, 'completed');
    const again = await post('Queued with a key.', 'outage-queued');
    assert.equal(again.status, 202);
    assert.equal(again.body.id, queuedRow, 'the key still names that one mission');

    // The slots are free: a new start is admitted and runs.
    const fresh = await post('After the outage.');
    assert.equal(fresh.status, 202, JSON.stringify(fresh.body));
    assert.equal(fresh.body.status, 'running');
    assert.equal((await stack.api.waitForEnd(key, fresh.body.id, 90_000)).status, 'completed');
    assert.deepEqual(
      (await rows()).filter((r) => ['queued', 'starting', 'running'].includes(r.status)),
      [],
      'nothing is left holding or waiting for a slot',
    );
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { startDevServer, type DevServer } from '../../temporal/dev-server.ts';
import { resolveTemporalCli } from '../../temporal/resolve-cli.ts';
import { freePort } from '../../testkit/free-port.ts';
import { startOwnTemporal } from '../../testkit/own-temporal.ts';
import { until } from '../../testkit/until.ts';
import { startPostgresCluster, type PostgresCluster } from '../helpers/postgres-cluster.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

/** Prints a measured figure (the suite asserts only generous bounds). */
const figure = (name: string, ms: number) => console.log(`# figure: ${name}: ${Math.round(ms)} ms`);

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t0 };
}

describe('Temporal down: fail fast, 503 with Retry-After, no phantom missions', () => {
  let temporal: Awaited<ReturnType<typeof startOwnTemporal>>;
  let stack: TestStack;
  let key: string;
  before(async () => {
    temporal = await startOwnTemporal('outage');
    // The start settler stays out of this test's way: what the API itself does while and after Temporal is away.
    stack = await startTestStack({ temporalAddress: temporal.address, env: { START_SETTLE_SECONDS: '3600' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'patient', maxTurns: 2 }));
  });
  after(async () => {
    await stack?.stop();
    await temporal?.close();
  });

  const rowsOf = () => stack.db.selectFrom('missions').select(['id', 'status', 'idempotency_key', 'error']).execute();

  it('answers /readyz and POST /missions fast, leaves nothing running, and recovers within seconds', async () => {
    await temporal.stop();

    const ready = await timed(() => fetch(`${stack.url}/readyz`));
    figure('readyz with Temporal down', ready.ms);
    assert.equal(ready.value.status, 503);
    assert.deepEqual(await ready.value.json(), { status: 'unavailable', checks: { database: true, temporal: false } });
    assert.ok(ready.ms < 5_000, `readyz took ${ready.ms} ms`);

    const keyless = await timed(() =>
      stack.api.request('POST', '/api/v1/missions', { key, body: { skill: 'patient', objective: 'No key.', workspaceCode: 'ws' } }),
    );
    figure('POST /missions with Temporal down', keyless.ms);
    assert.equal(keyless.value.status, 503, JSON.stringify(keyless.value.body));
    assert.equal(keyless.value.body.error.code, 'unavailable');
    assert.match(keyless.value.body.error.message, /Temporal is unavailable/);
    assert.doesNotMatch(keyless.value.body.error.message, /127\.0\.0\.1|:\d{4,5}\b/, 'no infrastructure address');
    assert.match(keyless.value.headers.get('retry-after') ?? '', /^\d+$/);
    assert.ok(keyless.ms < 15_000, `POST took ${keyless.ms} ms`);

    const keyed = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'patient', objective: 'With a key.', workspaceCode: 'ws', idempotencyKey: 'outage-1' },
    });
    assert.equal(keyed.status, 503);
    assert.match(keyed.body.error.message, /same idempotencyKey/);
    const toCancel = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'patient', objective: 'Cancel me.', workspaceCode: 'ws', idempotencyKey: 'outage-2' },
    });
    assert.equal(toCancel.status, 503);

    const rows = await rowsOf();
    assert.equal(rows.length, 3);
    assert.deepEqual(
      rows.map((r) => r.status),
      ['starting', 'starting', 'starting'],
      'no row claims to be running',
    );
    const keylessRow = rows.find((r) => r.idempotency_key === null)!;

    // GET and cancel agree while Temporal cannot say: the mission is starting, and cancelling it must wait.
    const seen = await timed(() => stack.api.getMission(key, keylessRow.id));
    figure('GET /missions/:id of a starting mission with Temporal down', seen.ms);
    assert.equal(seen.value.status, 200);
    assert.equal(seen.value.body.status, 'starting');
    const list = await stack.api.request('GET', '/api/v1/missions', { key });
    assert.deepEqual(
      list.body.items.map((m: { status: string }) => m.status),
      ['starting', 'starting', 'starting'],
    );
    const cancelDown = await stack.api.request('POST', `/api/v1/missions/${keylessRow.id}/cancel`, { key });
    assert.equal(cancelDown.status, 503);
    assert.ok(cancelDown.headers.get('retry-after'));

    const back = performance.now();
    await temporal.start();
    const serverUp = performance.now() - back;
    await until(async () => (await fetch(`${stack.url}/readyz`)).status === 200, {
      timeoutMs: 30_000,
      everyMs: 100,
      what: 'readyz back to 200',
    });
    figure('Temporal server start (dev server process)', serverUp);
    figure('readyz 200 after the Temporal server answers again', performance.now() - back - serverUp);

    // The same idempotency key completes the start: same mission, now running, and it runs to its end.
    const retried = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'patient', objective: 'With a key.', workspaceCode: 'ws', idempotencyKey: 'outage-1' },
    });
    assert.equal(retried.status, 202, JSON.stringify(retried.body));
    assert.equal(retried.body.id, rows.find((r) => r.idempotency_key === 'outage-1')!.id);
    assert.equal(retried.body.status, 'running');
    const ended = await stack.api.waitForEnd(key, retried.body.id, 90_000);
    assert.equal(ended.status, 'completed');

    // A start that never reached Temporal can be cancelled: nothing runs, and a retry does not start it.
    const cancelId = rows.find((r) => r.idempotency_key === 'outage-2')!.id;
    const cancelled = await stack.api.request('POST', `/api/v1/missions/${cancelId}/cancel`, { key });
    assert.equal(cancelled.status, 202);
    assert.equal(cancelled.body.status, 'cancelled');
    assert.equal((await stack.api.getMission(key, cancelId)).body.status, 'cancelled');
    const afterCancel = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'patient', objective: 'Cancel me.', workspaceCode: 'ws', idempotencyKey: 'outage-2' },
    });
    assert.equal(afterCancel.body.status, 'cancelled');
    await assert.rejects(stack.handle(cancelId).describe(), /not found/i, 'no workflow was started');

    // The keyless start is still `starting`: reading it settles nothing (the worker's start settler does, after
    // START_SETTLE_SECONDS: test/integration/admission-outage.test.ts), and it can be cancelled like the keyed one.
    assert.equal((await stack.api.getMission(key, keylessRow.id)).body.status, 'starting');
    const cancelKeyless = await stack.api.request('POST', `/api/v1/missions/${keylessRow.id}/cancel`, { key });
    assert.equal(cancelKeyless.status, 202);
    assert.equal(cancelKeyless.body.status, 'cancelled');
    const cancelAgain = await stack.api.request('POST', `/api/v1/missions/${keylessRow.id}/cancel`, { key });
    assert.equal(cancelAgain.status, 409, 'cancel agrees with GET: the mission is over');
    assert.deepEqual(
      (await rowsOf()).filter((r) => r.status === 'starting' || r.status === 'running'),
      [],
      'nothing is left claiming to start or run',
    );
  });
});

describe('an API started while Temporal is down', () => {
  let port: number;
  let temporal: DevServer | undefined;
  let stack: TestStack;
  before(async () => {
    port = await freePort();
    stack = await startTestStack({ temporalAddress: `127.0.0.1:${port}`, worker: false });
  });
  after(async () => {
    await stack?.stop();
    await temporal?.stop();
  });

  it('serves (503, /readyz says why) and becomes ready within seconds of Temporal coming up', async () => {
    const key = await stack.api.newKey();
    const ready = await timed(() => fetch(`${stack.url}/readyz`));
    assert.equal(ready.value.status, 503);
    assert.deepEqual(((await ready.value.json()) as { checks: unknown }).checks, { database: true, temporal: false });
    assert.ok(ready.ms < 5_000);
    const start = await stack.api.request('POST', '/api/v1/missions', {
      key,
      body: { skill: 'none', objective: 'x', workspaceCode: 'ws' },
    });
    assert.equal(start.status, 404, 'requests that need no Temporal are answered as usual');

    temporal = await startDevServer({ cliPath: resolveTemporalCli(), port });
    const up = performance.now();
    await until(async () => (await fetch(`${stack.url}/readyz`)).status === 200, { timeoutMs: 30_000, everyMs: 100, what: 'readyz 200' });
    figure('readyz 200 after Temporal first came up', performance.now() - up);
  });
});

describe('Postgres restarted or down: one retry on a fresh connection, else 503 with Retry-After', () => {
  let cluster: PostgresCluster;
  let stack: TestStack;
  let key: string;
  before(async () => {
    cluster = await startPostgresCluster();
    stack = await startTestStack({ databaseUrl: cluster.url, worker: false });
    key = await stack.api.newKey();
  });
  after(async () => {
    await stack?.stop();
    cluster?.destroy();
  });

  const listMissions = () => stack.api.request('GET', '/api/v1/missions', { key });

  it('answers every request after a restart (a dead pooled connection is retried once), never 500', async () => {
    for (let round = 1; round <= 3; round++) {
      // Fill the pool with idle connections, which the restart then kills.
      const warm = await Promise.all(Array.from({ length: 6 }, () => listMissions()));
      assert.deepEqual(
        warm.map((r) => r.status),
        [200, 200, 200, 200, 200, 200],
      );
      cluster.restart();
      const statuses = [];
      for (let i = 0; i < 8; i++) statuses.push((await listMissions()).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 200], `round ${round}`);
    }
  });

  it('sends a query again, once, on a fresh connection when its pooled connection was killed by a restart', async () => {
    const warm = await Promise.all(Array.from({ length: 5 }, () => sql`select pg_sleep(0.05)`.execute(stack.db)));
    assert.equal(warm.length, 5, 'five idle connections in the pool');
    // pg_ctl blocks this process, so the pool has not yet seen its connections die when the queries go out, as
    // happens whenever a restart or a failover races a request.
    cluster.restart();
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) => sql<{ n: number }>`select ${i}::int as n`.execute(stack.db)),
    );
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value.rows[0]!.n : String(r.reason))),
      [0, 1, 2, 3, 4],
    );
  });

  it('answers 503 unavailable with Retry-After while Postgres is down, readyz within a second, and 200 once it is back', async () => {
    await listMissions();
    cluster.stop();
    try {
      const res = await timed(() => listMissions());
      figure('GET /missions with Postgres down', res.ms);
      assert.equal(res.value.status, 503, JSON.stringify(res.value.body));
      assert.equal(res.value.body.error.code, 'unavailable');
      assert.equal(res.value.body.error.message, 'the database is unavailable; retry later');
      assert.match(res.value.headers.get('retry-after') ?? '', /^\d+$/);
      const start = await stack.api.request('POST', '/api/v1/missions', { key, body: { skill: 'x', objective: 'y', workspaceCode: 'ws' } });
      assert.equal(start.status, 503);
      const ready = await timed(() => fetch(`${stack.url}/readyz`));
      figure('readyz with Postgres down', ready.ms);
      assert.equal(ready.value.status, 503);
      assert.deepEqual(((await ready.value.json()) as { checks: unknown }).checks, {
        database: false,
        temporal: true,
        searchAttributes: true,
      });
      assert.ok(ready.ms < 5_000);
    } finally {
      cluster.start();
    }
    assert.equal((await listMissions()).status, 200);
  });
});

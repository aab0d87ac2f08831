import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ScheduleNotFoundError } from '@temporalio/client';
import { ALL_CAPABILITIES } from '../../testkit/api-client.ts';
import { runCli } from '../helpers/cli-process.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

/** Schedules over HTTP: what a caller's mistakes answer (400 naming the field, 404), timing in a zone, change, delete. */
describe('schedules: the API', () => {
  let stack: TestStack;
  let key: string;
  const created: Array<{ key: string; id: string }> = [];
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 't-sched', userId: 'ann' });
    await stack.api.createSkill(key, skillMd({ name: 'reporter' }));
  });
  after(async () => {
    // A schedule outlives the stack in the shared dev server: delete what the tests left.
    for (const s of created) await stack.api.request('DELETE', `/api/v1/schedules/${s.id}`, { key: s.key });
    await stack.stop();
  });

  const create = async (body: Record<string, unknown>, as = key) => {
    const res = await stack.api.request('POST', '/api/v1/schedules', {
      key: as,
      body: { skill: 'reporter', objective: 'Report.', workspaceCode: 'ws-1', paused: true, ...body },
    });
    if (res.status === 201) created.push({ key: as, id: res.body.id });
    return res;
  };
  const fieldsOf = (res: { body: { error?: { details?: { fields?: Array<{ field: string }> } } } }) =>
    (res.body.error?.details?.fields ?? []).map((f) => f.field);

  it('refuses a bad cron, an unknown time zone, a bad interval, and neither or both timings, with a 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ cron: '61 * * * *' }, 'cron'],
      [{ cron: 'every day at nine' }, 'cron'],
      [{ cron: '0 9 * * *', timezone: 'Mars/Olympus_Mons' }, 'timezone'],
      [{ every: '5 minutes' }, 'every'],
      [{ every: '0s' }, 'every'],
      [{}, 'cron'],
      [{ cron: '0 9 * * *', every: '1h' }, 'cron'],
      [{ every: '1h', overlap: 'cancel_other' }, 'overlap'],
      [{ every: '1h', catchupWindow: '1s' }, 'catchupWindow'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(fieldsOf(res).includes(field), `${JSON.stringify(body)} names ${field}: ${JSON.stringify(res.body)}`);
    }
  });

  it('a spec the API lets through but Temporal refuses is a 400 naming the field, never a 500', async () => {
    // Node's time zone database reads names case-insensitively; Temporal's (Go's) does not.
    const res = await create({ cron: '0 9 * * *', timezone: 'asia/tokyo' });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.deepEqual(fieldsOf(res), ['timezone']);
    assert.match(res.body.error.message, /Temporal refused/);
    assert.deepEqual(
      (await stack.api.request('GET', '/api/v1/schedules', { key })).body.items.filter(
        (s: { spec: { timezone: string } }) => s.spec.timezone === 'asia/tokyo',
      ),
      [],
      'no row left behind',
    );
  });

  it('a skill that is not the caller’s is a 404, and so is another user’s schedule', async () => {
    const other = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 't-sched', userId: 'bob' });
    assert.equal((await create({ every: '1h' }, other)).status, 404, 'bob has no skill reporter');
    const mine = (await create({ every: '1h' })).body.id as string;
    for (const [method, path, body] of [
      ['GET', '', undefined],
      ['PATCH', '', { objective: 'Mine now.' }],
      ['POST', '/pause', undefined],
      ['POST', '/trigger', undefined],
      ['DELETE', '', undefined],
    ] as const) {
      const res = await stack.api.request(method, `/api/v1/schedules/${mine}${path}`, { key: other, ...(body ? { body } : {}) });
      assert.equal(res.status, 404, `${method} ${path} by another user`);
    }
    assert.deepEqual((await stack.api.request('GET', '/api/v1/schedules', { key: other })).body.items, []);
    assert.equal((await stack.api.request('GET', `/api/v1/schedules/${mine}`, { key })).status, 200, 'still there for its owner');
  });

  it('a cron in a time zone shows its next run times on that zone’s clock, and a change of timing reaches Temporal', async () => {
    const res = await create({ cron: '0 9 * * *', timezone: 'Asia/Tokyo' });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.spec, { cron: '0 9 * * *', timezone: 'Asia/Tokyo' });
    const got = await stack.api.request('GET', `/api/v1/schedules/${res.body.id}`, { key });
    assert.equal(got.body.paused, true);
    assert.ok(got.body.nextRunTimes.length > 0);
    for (const t of got.body.nextRunTimes) assert.match(t, /T09:00:00\+09:00$/, 'nine in the morning, Tokyo time');
    assert.equal(new Date(got.body.nextRunTimes[0]).getUTCHours(), 0, 'which is midnight UTC');

    const patched = await stack.api.request('PATCH', `/api/v1/schedules/${res.body.id}`, {
      key,
      body: { cron: '30 18 * * 1-5', timezone: 'America/New_York', objective: 'Evening report.', limits: { maxTurns: 3 } },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.objective, 'Evening report.');
    assert.deepEqual(patched.body.limits, { maxTurns: 3 });
    const after = await stack.api.request('GET', `/api/v1/schedules/${res.body.id}`, { key });
    for (const t of after.body.nextRunTimes) assert.match(t, /T18:30:00-0[45]:00$/, 'half past six in New York');
    // A describe is a query of the Schedule's own workflow, which the update just woke: on a loaded machine the dev
    // server took over the client's default 5 s to answer it (CI, 2026-12-05).
    const described = await stack.temporal.connection.withDeadline(Date.now() + 30_000, () =>
      stack.temporal.schedule.getHandle(`schedule-${res.body.id}`).describe(),
    );
    assert.deepEqual(described.spec.timezone, 'America/New_York', 'the Temporal Schedule itself changed');
    assert.equal((await stack.api.request('PATCH', `/api/v1/schedules/${res.body.id}`, { key, body: { every: 'soon' } })).status, 400);
  });

  it('lists the caller’s schedules a page at a time, and delete removes the Temporal Schedule too', async () => {
    const k = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 't-sched', userId: 'cat' });
    await stack.api.createSkill(k, skillMd({ name: 'reporter' }));
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ every: `${i + 1}h`, paused: i === 1 }, k)).body.id as string);
    assert.equal((await stack.api.request('POST', `/api/v1/schedules/${ids[2]}/pause`, { key: k })).status, 202);
    const first = await stack.api.request('GET', '/api/v1/schedules?limit=2', { key: k });
    assert.deepEqual(
      first.body.items.map((s: { id: string; paused: boolean }) => [s.id, s.paused]),
      [
        [ids[2], true],
        [ids[1], true],
      ],
      'the list says which are paused: created paused, or paused since',
    );
    // Resumed in Temporal by other means (the Web UI, the temporal CLI): the detail says so, and the list follows.
    await stack.temporal.schedule.getHandle(`schedule-${ids[1]}`).unpause('from the Web UI');
    assert.equal((await stack.api.request('GET', `/api/v1/schedules/${ids[1]}`, { key: k })).body.paused, false);
    const again = await stack.api.request('GET', '/api/v1/schedules?limit=2', { key: k });
    assert.equal(again.body.items[1].paused, false);
    const second = await stack.api.request('GET', `/api/v1/schedules?limit=2&cursor=${first.body.nextCursor}`, { key: k });
    assert.deepEqual(
      second.body.items.map((s: { id: string; paused: boolean }) => [s.id, s.paused]),
      [[ids[0], false]],
    );
    assert.equal((await stack.api.request('DELETE', `/api/v1/schedules/${ids[0]}`, { key: k })).status, 204);
    await assert.rejects(stack.temporal.schedule.getHandle(`schedule-${ids[0]}`).describe(), ScheduleNotFoundError);
    assert.equal((await stack.api.request('GET', `/api/v1/schedules/${ids[0]}`, { key: k })).status, 404);
  });

  it('the cadenza CLI creates, shows, pauses, triggers, lists and deletes a schedule through the API', async () => {
    const env = { CADENZA_URL: stack.url, CADENZA_API_KEY: key, CADENZA_ADMIN_KEY: '', XDG_CONFIG_HOME: '/nonexistent' };
    const made = await runCli(
      ['schedules', 'create', 'reporter', 'Report.', '--cron', '0 9 * * *', '--timezone', 'Asia/Tokyo', '--paused', '--json'],
      env,
    );
    assert.equal(made.code, 0, made.stderr);
    const id = JSON.parse(made.stdout).id as string;
    created.push({ key, id });
    const shown = await runCli(['schedules', 'get', id], env);
    assert.match(shown.stdout, /timing: 0 9 \* \* \* \(Asia\/Tokyo\)/);
    assert.match(shown.stdout, /paused: true/);
    assert.equal((await runCli(['schedules', 'unpause', id], env)).code, 0);
    assert.equal((await runCli(['schedules', 'pause', id], env)).code, 0);
    assert.equal((await runCli(['schedules', 'trigger', id], env)).code, 0);
    assert.match((await runCli(['schedules', 'list'], env)).stdout, new RegExp(id));
    const bad = await runCli(['schedules', 'create', 'reporter', 'Report.', '--cron', '99 * * * *'], env);
    assert.equal(bad.code, 5, 'refused by the API');
    assert.match(bad.stderr, /cron/);
    assert.equal((await runCli(['schedules', 'delete', id], env)).code, 0);
    assert.equal((await runCli(['schedules', 'get', id], env)).code, 4, 'not found');
  });
});

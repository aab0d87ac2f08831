import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ALL_CAPABILITIES } from '../../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import { ScheduleSearchAttribute } from '../../contracts/schedules.ts';

/**
 * Schedules that run, on the real dev server: on time, paused and resumed, triggered, skipped while the last run's
 * mission still runs, and started through admission (here MAX_RUNNING_MISSIONS_PER_USER=1, MAX_STARTS_PER_MINUTE_PER_USER=10). A mission whose objective
 * names `gate-<name>` calls lab.scan, which answers once the test opens that gate; any other answers at once.
 */
describe('schedules: runs', () => {
  let stack: TestStack;
  const gates = new Map<string, () => void>();
  const opened = new Map<string, Promise<void>>();
  const gate = (name: string) => {
    if (!opened.has(name)) opened.set(name, new Promise<void>((ok) => gates.set(name, ok)));
    return opened.get(name)!;
  };
  const open = (name: string) => {
    void gate(name);
    gates.get(name)!();
  };
  const created: Array<{ key: string; id: string }> = [];
  before(async () => {
    stack = await startTestStack({ env: { MAX_RUNNING_MISSIONS_PER_USER: '1', MAX_STARTS_PER_MINUTE_PER_USER: '10' } });
    stack.tools.on('scan', async (input) => {
      await gate(String(input.target));
      return { body: { scanned: input.target } };
    });
    stack.model.setHandler((req) => {
      const name = /gate-([a-z0-9]+)/.exec(req.lastUserText)?.[1];
      if (!name || req.toolResults.length > 0) return { reply: { text: 'done' } };
      return { reply: { toolUses: [{ name: 'lab__scan', input: { target: name } }] } };
    });
  });
  after(async () => {
    for (const name of [...opened.keys()]) open(name);
    for (const s of created) await stack.api.request('DELETE', `/api/v1/schedules/${s.id}`, { key: s.key });
    await stack.stop();
  });

  const user = async (name: string) => {
    const key = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 't-runs', userId: name });
    await stack.api.createSkill(key, skillMd({ name: 'scanner', tools: ['lab.scan'], maxTurns: 2 }));
    return key;
  };
  const create = async (key: string, body: Record<string, unknown>) => {
    const res = await stack.api.request('POST', '/api/v1/schedules', {
      key,
      body: { skill: 'scanner', objective: 'Scan.', workspaceCode: 'ws-1', ...body },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    created.push({ key, id: res.body.id });
    return res.body.id as string;
  };
  const detail = async (key: string, id: string) => {
    const res = await stack.api.request('GET', `/api/v1/schedules/${id}`, { key });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  const missions = async (key: string, id: string) =>
    (await stack.api.request('GET', `/api/v1/missions?scheduleId=${id}&limit=100`, { key })).body.items as Array<{
      id: string;
      status: string;
      scheduleId?: string;
    }>;
  const act = (key: string, id: string, what: string) => stack.api.request('POST', `/api/v1/schedules/${id}/${what}`, { key });

  it('every 2s: a mission runs on time, carries the schedule id (filter, search attribute), and each run is recorded', async () => {
    const key = await user('ann');
    const id = await create(key, { every: '2s' });
    await until(async () => (await missions(key, id)).some((m) => m.status === 'completed'), {
      timeoutMs: 30_000,
      what: 'a completed run',
    });
    await act(key, id, 'pause');
    const [mission] = (await missions(key, id)).filter((m) => m.status === 'completed');
    assert.equal(mission!.scheduleId, id);
    const described = await stack.handle(mission!.id).describe();
    assert.equal(described.typedSearchAttributes.get(ScheduleSearchAttribute), id, 'CadenzaSchedule in the Web UI');
    const runs = (await detail(key, id)).runs as Array<{ missionId: string; outcome: string; scheduledAt: string; at: string }>;
    const run = runs.find((r) => r.missionId === mission!.id)!;
    assert.equal(run.outcome, 'started');
    assert.equal(new Date(run.scheduledAt).getTime() % 2_000, 0, 'scheduled on the 2-second grid');
    // Nobody else's missions come through the filter.
    const other = await user('bob');
    assert.deepEqual(await missions(other, id), []);
  });

  it('pause stops the runs, unpause resumes them, and trigger runs one now even while paused', async () => {
    const key = await user('cat');
    const id = await create(key, { every: '2s' });
    await until(async () => (await missions(key, id)).length >= 1, { timeoutMs: 30_000, what: 'a first run' });
    assert.equal((await act(key, id, 'pause')).status, 202);
    assert.equal((await detail(key, id)).paused, true);
    // A run Temporal took just before the pause may still record itself: count once the runs have settled.
    await until(async () => (await detail(key, id)).actions.running === 0, { timeoutMs: 30_000, everyMs: 500, what: 'no run in flight' });
    const settled = (await detail(key, id)).actions.taken as number;
    await new Promise((ok) => setTimeout(ok, 5_000));
    assert.equal((await detail(key, id)).actions.taken, settled, 'no run while paused (5 s, every 2 s)');

    assert.equal((await act(key, id, 'trigger')).status, 202);
    await until(async () => (await detail(key, id)).actions.taken > settled, {
      timeoutMs: 20_000,
      everyMs: 500,
      what: 'the triggered run',
    });
    assert.equal((await detail(key, id)).paused, true, 'a trigger leaves it paused');

    const before = (await missions(key, id)).length;
    assert.equal((await act(key, id, 'unpause')).status, 202);
    await until(async () => (await missions(key, id)).length >= before + 2, { timeoutMs: 30_000, what: 'runs after unpause' });
    await act(key, id, 'pause');
  });

  it('overlap skip: while a run’s mission still runs, the next runs are skipped, not piled up', async () => {
    const key = await user('dan');
    const id = await create(key, { every: '2s', objective: 'Scan gate-slow.', overlap: 'skip' });
    await until(async () => (await missions(key, id)).length >= 1, { timeoutMs: 30_000, what: 'a first run' });
    await until(async () => (await detail(key, id)).actions.skippedOverlap >= 2, { timeoutMs: 30_000, everyMs: 500, what: 'skipped runs' });
    assert.equal((await missions(key, id)).length, 1, 'one mission, still running');
    await act(key, id, 'pause');
    open('slow');
    const [m] = await missions(key, id);
    assert.equal((await stack.api.waitForEnd(key, m!.id)).status, 'completed');
  });

  it('overlap buffer_one: one run waits for the running one and starts once it ends; the runs beyond it are skipped', async () => {
    const key = await user('hal');
    const id = await create(key, { every: '2s', objective: 'Scan gate-buffered.', overlap: 'buffer_one' });
    await until(async () => (await missions(key, id)).length >= 1, { timeoutMs: 30_000, what: 'a first run' });
    await until(async () => (await detail(key, id)).actions.skippedOverlap >= 1, {
      timeoutMs: 30_000,
      everyMs: 500,
      what: 'a run skipped beyond the buffered one',
    });
    assert.equal((await missions(key, id)).length, 1, 'the buffered run waits: still one mission');
    // (A pause would hold the buffered run too: Temporal starts nothing while paused.)
    open('buffered');
    await until(async () => (await missions(key, id)).length >= 2, { timeoutMs: 30_000, what: 'the buffered run, after the first' });
    await act(key, id, 'pause');
    for (const m of await missions(key, id)) assert.equal((await stack.api.waitForEnd(key, m.id)).status, 'completed');
  });

  it('overlap allow_all: a run starts while the last run’s mission still runs (admission then queues it)', async () => {
    const key = await user('ida');
    const id = await create(key, { every: '2s', objective: 'Scan gate-parallel.', overlap: 'allow_all' });
    await until(async () => (await missions(key, id)).length >= 2, { timeoutMs: 30_000, what: 'a second run while the first runs' });
    await act(key, id, 'pause');
    assert.equal((await detail(key, id)).actions.skippedOverlap, 0, 'nothing skipped');
    const statuses = (await missions(key, id)).map((m) => m.status);
    assert.ok(statuses.includes('running') && statuses.includes('queued'), `one runs, the next waits for its slot: ${statuses}`);
    open('parallel');
    for (const m of await missions(key, id)) assert.equal((await stack.api.waitForEnd(key, m.id)).status, 'completed');
  });

  it('over MAX_RUNNING_MISSIONS_PER_USER a run’s mission is queued by admission (run recorded started), then runs', async () => {
    const key = await user('eve');
    const busy = await stack.api.startMission(key, { skill: 'scanner', objective: 'Scan gate-busy.' });
    assert.equal(busy.status, 'running');
    const id = await create(key, { every: '1h', paused: true });
    await act(key, id, 'trigger');
    await until(async () => (await missions(key, id)).length === 1, { timeoutMs: 20_000, what: 'the triggered run' });
    const [queued] = await missions(key, id);
    assert.equal(queued!.status, 'queued', 'admission decides: the slot is taken, the mission waits');
    // The run is recorded once its mission's start returned: a moment after the mission row.
    await until(async () => (await detail(key, id)).runs.length === 1, { timeoutMs: 20_000, everyMs: 500, what: 'the run recorded' });
    const [run] = (await detail(key, id)).runs;
    assert.deepEqual([run.outcome, run.missionId], ['started', queued!.id]);
    open('busy');
    assert.equal((await stack.api.waitForEnd(key, busy.id)).status, 'completed');
    assert.equal((await stack.api.waitForEnd(key, queued!.id)).status, 'completed', 'it ran once the slot freed');
  });

  it('over MAX_STARTS_PER_MINUTE_PER_USER a run is refused and recorded with the reason, never lost', async () => {
    const key = await user('fay');
    for (let i = 0; i < 10; i++) await stack.api.startMission(key, { skill: 'scanner', objective: 'Scan.' });
    const id = await create(key, { every: '1h', paused: true });
    await act(key, id, 'trigger');
    await until(async () => (await detail(key, id)).runs.length === 1, { timeoutMs: 20_000, everyMs: 500, what: 'the triggered run' });
    const [run] = (await detail(key, id)).runs;
    assert.equal(run.outcome, 'refused');
    assert.equal(run.missionId, null);
    assert.match(run.reason, /more than 10 mission starts in a minute/);
    assert.deepEqual(await missions(key, id), []);
  });
});

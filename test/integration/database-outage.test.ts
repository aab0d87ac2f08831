import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  activityAttempts,
  modelRequestsOf,
  REPLY_USAGE,
  toolRequestsOf,
  useScanThenAnswer,
  waitForMissionEnd,
  waitForPendingAttempt,
} from '../../testkit/outage-missions.ts';
import { startOwnPostgres, type OwnPostgres } from '../../testkit/own-postgres.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';

const ADDRESS = /\b\d{1,3}(\.\d{1,3}){3}\b|localhost|::1/;
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

// The Postgres cluster here is this file's own: the tests stop and restart it under missions in flight.
describe('missions in flight outlive a Postgres outage', () => {
  let pg: OwnPostgres;
  let stack: TestStack;
  let key: string;
  before(async () => {
    pg = await startOwnPostgres();
    stack = await startTestStack({ databaseUrl: await pg.createDatabase('outlast') });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'outlast', tools: ['lab.scan'], maxTurns: 3 }));
  });
  after(async () => {
    await stack?.stop();
    await pg?.destroy();
  });

  /** Starts `n` missions a little apart, so that an outage finds them in different steps (model, tool, store). */
  async function startMissions(prefix: string, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push((await stack.api.startMission(key, { skill: 'outlast', objective: `Mission ${prefix}${i}` })).id);
      await sleep(600);
    }
    return ids;
  }

  async function assertAllCompleted(ids: string[]) {
    for (const id of ids) {
      const { mission } = await waitForMissionEnd(stack, key, id);
      assert.equal(mission.status, 'completed', `mission ${id}: ${JSON.stringify(mission.error)}`);
      assert.match(mission.result.text, /^done /);
      assert.deepEqual(
        mission.tools.map((t: { status: string }) => t.status),
        ['completed'],
        'the tool call completed: the outage was not shown to the model as a tool error',
      );
      const attempts = await activityAttempts(stack, id);
      assert.deepEqual(attempts.callModel, [1, 1], 'the outage spent none of the model-call attempts');
    }
  }

  it('keeps a model reply whose store met the outage: one model request per turn, its tokens counted once', async () => {
    useScanThenAnswer(stack.model, 3_000);
    stack.tools.on('scan', () => ({ body: { scanned: true } }));
    const { id } = await stack.api.startMission(key, { skill: 'outlast', objective: 'Mission keptreply' });
    await stack.model.waitFor(() => modelRequestsOf(stack.model, 'keptreply').length === 1);
    await pg.stop();
    await stack.model.waitFor(() => modelRequestsOf(stack.model, 'keptreply')[0]!.finishedAt !== undefined); // answered: the store fails
    await sleep(3_000);
    await pg.start();
    await assertAnsweredOnce(id, 'keptreply');
  });

  it('keeps a tool answer whose end-write met the outage: the tool is called once', async () => {
    useScanThenAnswer(stack.model, 200);
    stack.tools.on('scan', () => ({ body: { scanned: true }, delayMs: 3_000 }));
    const { id } = await stack.api.startMission(key, { skill: 'outlast', objective: 'Mission keptscan' });
    await stack.tools.waitFor(() => toolRequestsOf(stack.tools, 'keptscan').length === 1);
    await pg.stop();
    await stack.tools.waitFor(() => toolRequestsOf(stack.tools, 'keptscan')[0]!.endedAt !== undefined); // answered: the end-write fails
    await sleep(3_000);
    await pg.start();
    await assertAnsweredOnce(id, 'keptscan');
  });

  /** The mission completed with one model request per turn (two) and one tool request, and counts each reply's tokens once. */
  async function assertAnsweredOnce(id: string, name: string) {
    const { mission } = await waitForMissionEnd(stack, key, id);
    assert.equal(mission.status, 'completed', JSON.stringify(mission.error));
    assert.equal(mission.result.text, `done ${name}`);
    const modelRequests = modelRequestsOf(stack.model, name).length;
    const { inputTokens, outputTokens } = mission.result.metrics;
    assert.deepEqual(
      { inputTokens, outputTokens },
      { inputTokens: modelRequests * REPLY_USAGE.inputTokens, outputTokens: modelRequests * REPLY_USAGE.outputTokens },
      'every request the provider answered counts its tokens once',
    );
    assert.equal(modelRequests, 2, 'one model request per turn: the outage made no call twice');
    assert.equal(toolRequestsOf(stack.tools, name).length, 1, 'one tool request');
  }

  it('completes every mission through a 30 s outage (pg_ctl stop, then start)', async () => {
    useScanThenAnswer(stack.model, 1_500);
    stack.tools.on('scan', () => ({ body: { scanned: true }, delayMs: 2_000 }));
    const ids = await startMissions('stop', 4);
    await stack.tools.waitFor(() => stack.tools.requests.filter((r) => r.tool === 'scan').length >= 2);
    await pg.stop();
    const down = Date.now();
    await sleep(30_000); // the outage itself, not a synchronisation
    await pg.start();
    console.log(`outage: ${Date.now() - down} ms`);
    await assertAllCompleted(ids);
  });

  it('completes every mission through a Postgres restart (pg_ctl restart)', async () => {
    const before = stack.tools.requests.length;
    useScanThenAnswer(stack.model, 1_000);
    stack.tools.on('scan', () => ({ body: { scanned: true }, delayMs: 1_000 }));
    const ids = await startMissions('restart', 4);
    await stack.tools.waitFor(() => stack.tools.requests.slice(before).filter((r) => r.tool === 'scan').length >= 2);
    await pg.restart();
    await assertAllCompleted(ids);
  });

  it('cancels a mission at once while its activity waits for the database, and records it once the database is back', async () => {
    stack.model.setHandler(() => ({ reply: { text: 'never stored' }, delayMs: 1_000 }));
    const { id } = await stack.api.startMission(key, { skill: 'outlast', objective: 'Mission cancelwait' });
    await stack.model.waitFor(() => stack.model.inFlight > 0);
    await pg.stop();
    await stack.model.waitFor(() => stack.model.inFlight === 0); // the reply is in; storing it fails: the activity waits
    await stack.handle(id).cancel(); // through Temporal: the API itself needs the database
    const deadline = Date.now() + 60_000;
    while (!(await stack.handle(id).fetchHistory()).events?.some((e) => e.activityTaskCanceledEventAttributes)) {
      assert.ok(Date.now() < deadline, 'the waiting model call was not cancelled while the database was down');
      await sleep(250);
    }
    await pg.start();
    const { mission } = await waitForMissionEnd(stack, key, id);
    assert.equal(mission.status, 'cancelled');
  });
});

describe('a database that stays away longer than the wait bound', () => {
  let pg: OwnPostgres;
  let stack: TestStack;
  let key: string;
  before(async () => {
    pg = await startOwnPostgres();
    stack = await startTestStack({ databaseUrl: await pg.createDatabase('gives_up'), env: { DATABASE_OUTAGE_WAIT_SECONDS: '2' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'gives-up', tools: ['lab.lookup'], maxTurns: 3 }));
  });
  after(async () => {
    await stack?.stop();
    await pg?.destroy();
  });

  it('fails the mission in phase "database" (not "model"), with a message that names no address', async () => {
    stack.model.setHandler(() => ({ reply: { text: 'never stored' }, delayMs: 2_000 }));
    const { id } = await stack.api.startMission(key, { skill: 'gives-up', objective: 'Mission giveup' });
    await stack.model.waitFor(() => stack.model.inFlight > 0);
    await pg.stop();
    // The reply cannot be stored: each of the three model-call attempts waits 2 s, then the call fails for good.
    const deadline = Date.now() + 90_000;
    while (!(await stack.handle(id).fetchHistory()).events?.some((e) => e.activityTaskFailedEventAttributes)) {
      assert.ok(Date.now() < deadline, 'the model call did not give up');
      await sleep(500);
    }
    await pg.start();
    const { mission } = await waitForMissionEnd(stack, key, id);
    assert.equal(modelRequestsOf(stack.model, 'giveup').length, 1, 'the reply was kept across the attempts: the model was called once');
    assert.equal(mission.status, 'failed');
    assert.equal(mission.error.phase, 'database');
    assert.match(mission.error.message, /database was unreachable/);
    assert.doesNotMatch(mission.error.message, ADDRESS);
    assert.doesNotMatch(mission.error.message, new RegExp(String(pg.port)));
  });

  it('a model reply outlives the attempts that could not store it: the next attempt stores it without a new call', async () => {
    useScanThenAnswer(stack.model, 2_000);
    stack.tools.on('lookup', () => ({ body: { found: true } }));
    const { id } = await stack.api.startMission(key, { skill: 'gives-up', objective: 'Mission nextreply' });
    await stack.model.waitFor(() => modelRequestsOf(stack.model, 'nextreply').length === 1);
    await pg.stop();
    await waitForPendingAttempt(stack, id, 'callModel', 2); // attempt 1 failed after its 2 s wait, its reply in the failure's heartbeat
    await pg.start();
    const { mission } = await waitForMissionEnd(stack, key, id);
    assert.equal(mission.status, 'completed', JSON.stringify(mission.error));
    const requests = modelRequestsOf(stack.model, 'nextreply').length;
    assert.equal(requests, 2, 'one model request per turn across the attempts');
    assert.equal(mission.result.metrics.inputTokens, requests * REPLY_USAGE.inputTokens, 'each reply counted once');
  });

  it('a tool answer outlives the attempts that could not store it: the tool is called once', async () => {
    stack.model.setHandler((req) =>
      req.allToolResults.length === 0
        ? { reply: { toolUses: [{ id: 'tu_nextlookup', name: 'lab__lookup', input: { q: 'nextlookup' } }] } }
        : { reply: { text: `seen: ${req.allToolResults[0]!.content}` } },
    );
    stack.tools.on('lookup', () => ({ body: { found: 'nextlookup' }, delayMs: 2_000 }));
    const { id } = await stack.api.startMission(key, { skill: 'gives-up', objective: 'Mission nextlookup' });
    await stack.tools.waitFor(() => toolRequestsOf(stack.tools, 'nextlookup').length === 1);
    await pg.stop();
    await waitForPendingAttempt(stack, id, 'runTool', 2);
    await pg.start();
    const { mission } = await waitForMissionEnd(stack, key, id);
    assert.equal(mission.status, 'completed', JSON.stringify(mission.error));
    assert.deepEqual(
      mission.tools.map((t: { status: string }) => t.status),
      ['completed'],
    );
    assert.match(mission.result.text, /found/);
    assert.equal(toolRequestsOf(stack.tools, 'nextlookup').length, 1, 'one tool request across the attempts');
  });

  it('reports a tool that cannot be reached without its address', async () => {
    stack.model.setHandler((req) =>
      req.allToolResults.length === 0
        ? { reply: { toolUses: [{ id: 'tu_gone', name: 'lab__lookup', input: { q: 'x' } }] } }
        : { reply: { text: `seen: ${req.allToolResults[0]!.content}` } },
    );
    const toolPort = `:${new URL(stack.tools.url).port}`;
    await stack.tools.close(); // LAB_TOOLS_URL now refuses connections
    const { id } = await stack.api.startMission(key, { skill: 'gives-up', objective: 'Mission notool' });
    const { mission } = await waitForMissionEnd(stack, key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.tools[0].status, 'error');
    assert.match(mission.result.text, /request failed/);
    assert.doesNotMatch(mission.result.text, ADDRESS, 'the error the model saw names no address');
    const feed = await stack.api.request('GET', `/api/v1/activity?missionId=${id}`, { key });
    assert.equal(feed.status, 200);
    assert.ok(JSON.stringify(feed.body).includes('request failed'), 'the feed shows the tool error');
    assert.doesNotMatch(JSON.stringify(feed.body), ADDRESS, 'the feed names no address either');
    assert.ok(!JSON.stringify(feed.body).includes(toolPort) && !mission.result.text.includes(toolPort), 'nor the port');
  });
});

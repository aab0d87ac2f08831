import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import proto from '@temporalio/proto';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { starveEventLoop } from '../../testkit/starve-event-loop.ts';

/**
 * A worker starved of CPU (issue 36's 10,000-mission run: tool calls ran twice) is slower, not wrong: while its event
 * loop is held longer than a heartbeat interval, Temporal must not time the attempt out and hand the call to another.
 */
describe('a call in flight on a worker whose event loop is starved for seconds', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'starved', tools: ['lab.scan'], maxTurns: 2 }));
  });
  after(() => stack.stop());

  const STARVED_MS = 12_000;

  it('calls the tool once: no second attempt calls it while the first is still waiting for its answer', async () => {
    let called = 0;
    stack.tools.on('scan', async () => {
      if (++called === 1) starveEventLoop(STARVED_MS);
      // The answer comes a moment after the loop runs again: a second attempt started meanwhile would call the tool.
      await new Promise((ok) => setTimeout(ok, 1_500));
      return { body: { found: 'after a starved loop' } };
    });
    stack.model.setHandler((req) =>
      req.allToolResults.length === 0
        ? { reply: { toolUses: [{ id: 'tu_starved', name: 'lab__scan', input: { target: 'x' } }] } }
        : { reply: { text: 'done' } },
    );
    const { id } = await stack.api.startMission(key, { skill: 'starved', objective: 'Scan on a starved worker.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const calls = stack.tools.requests.filter((r) => r.tool === 'scan');
    assert.deepEqual(
      calls.map((r) => r.headers['idempotency-key']),
      [`mission-${id}/tu_starved`],
      'the tool server saw the call once',
    );
    assert.match(stack.model.requests.at(-1)!.toolResults[0]!.content, /after a starved loop/);
  });

  it('asks the model once: a starved model call is not retried while it is still waiting for its reply', async () => {
    let asked = 0;
    stack.model.setHandler(() => {
      if (++asked === 1) starveEventLoop(STARVED_MS);
      return { reply: { text: 'answered once' } };
    });
    const { id } = await stack.api.startMission(key, { skill: 'starved', objective: 'Ask on a starved worker.' });
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    assert.equal(mission.result.text, 'answered once');
    // A retried attempt would ask again once the loop runs: give it the time it would take.
    await new Promise((ok) => setTimeout(ok, 3_000));
    assert.equal(asked, 1, 'the model was asked once');
  });
});

describe('a mission whose database is busy for longer than a step usually takes', () => {
  let stack: TestStack;
  let key: string;
  before(async () => {
    stack = await startTestStack();
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'patient', maxTurns: 1 }));
    stack.model.setHandler(() => ({ reply: { text: 'ready' } }));
  });
  after(() => stack.stop());

  it('prepares it in one attempt that waits 40 s: a loaded database makes the step slower, it does not abandon it', async () => {
    // Every mission's preparation reads the owner's profile: with that table locked, it waits as it would behind a
    // database that answers slowly (issue 36: five abandoned attempts fail the mission).
    const holder = new pg.Client({ connectionString: stack.env.DATABASE_URL });
    await holder.connect();
    let id: string;
    try {
      await holder.query('begin');
      await holder.query('lock table profiles in access exclusive mode');
      ({ id } = await stack.api.startMission(key, { skill: 'patient', objective: 'Wait for a busy database.' }));
      await new Promise((ok) => setTimeout(ok, 40_000));
    } finally {
      await holder.query('commit').catch(() => {});
      await holder.end();
    }
    const mission = await stack.api.waitForEnd(key, id);
    assert.equal(mission.status, 'completed');
    const { events } = await stack.handle(id).fetchHistory();
    const scheduled = events!.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'prepareMission')!.eventId!;
    const started = events!.find(
      (e) =>
        e.eventType === proto.temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED &&
        String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled),
    )!;
    assert.equal(started.activityTaskStartedEventAttributes!.attempt, 1, 'prepareMission finished in its first attempt');
  });
});

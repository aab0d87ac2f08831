import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import proto from '@temporalio/proto';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import { spawnedWorkers } from '../helpers/worker-process.ts';

const { EventType } = proto.temporal.api.enums.v1;

/**
 * Issue 36: under overload the Temporal server records a model call's attempt as started whose task no worker ever
 * receives; the attempt then times out on its heartbeat (30 s). Here the dispatch is lost on purpose: the test polls the
 * model task queue itself, while no worker serves it, and drops the task it gets, as a worker whose poll answer never
 * arrived would. Such an attempt must not spend one of the call's three tries, which are the provider's errors'.
 */
describe('a model call whose dispatch was lost', () => {
  let stack: TestStack;
  let key: string;
  const workers = spawnedWorkers();
  before(async () => {
    // The in-process worker runs the workflows and the tools; the model queue has no worker until the test starts one.
    stack = await startTestStack({ env: { WORKER_QUEUES: 'missions,tools' } });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'plain', maxTurns: 3 }));
  });
  after(async () => {
    await workers.killAll();
    await stack.stop();
  });

  /** Takes one task of the model queue and drops it: the server holds that attempt as started by `lost-dispatch`. */
  const loseOneDispatch = async () => {
    const task = await stack.temporal.connection.workflowService.pollActivityTaskQueue({
      namespace: stack.config.temporal.namespace,
      taskQueue: { name: stack.config.temporal.modelTaskQueue },
      identity: 'lost-dispatch',
    });
    assert.equal(task.activityType?.name, 'callModel', 'the test took a model call');
    return task.workflowExecution!.workflowId!;
  };

  it('is tried again without spending a try: two 500s after a lost attempt still complete, and three still fail', async () => {
    // Per mission (its objective), the provider's answers: the recovering one fails twice then answers; the other fails.
    const asked = { recovering: 0, failing: 0 };
    stack.model.setHandler((req) => {
      if (!req.lastUserText.includes('recovers')) return (asked.failing++, { status: 500 });
      return ++asked.recovering >= 3 ? { reply: { text: 'answered on the third try' } } : { status: 500 };
    });
    const recovering = await stack.api.startMission(key, { skill: 'plain', objective: 'This one recovers.' });
    const failing = await stack.api.startMission(key, { skill: 'plain', objective: 'This one keeps failing.' });
    // Both missions' first model attempts are lost.
    const lost = new Set([await loseOneDispatch(), await loseOneDispatch()]);
    assert.deepEqual(lost, new Set([`mission-${recovering.id}`, `mission-${failing.id}`]));
    await workers.spawn({ ...stack.env, WORKER_QUEUES: 'model' });

    const [ok, failed] = await Promise.all([
      stack.api.waitForEnd(key, recovering.id, 150_000),
      stack.api.waitForEnd(key, failing.id, 150_000),
    ]);
    // The lost attempt timed out on its heartbeat; then the provider's two 500s and its answer: three requests.
    assert.equal(ok.status, 'completed', JSON.stringify(ok.error));
    assert.equal(ok.result.text, 'answered on the third try');
    assert.equal(asked.recovering, 3);
    // Three 500s still fail the call, after exactly three requests, though Temporal made four attempts.
    assert.equal(failed.status, 'failed');
    assert.equal(failed.error.phase, 'model');
    assert.match(failed.error.message, /500/);
    assert.equal(asked.failing, 3);
    const attempts = await startedAttempts(failing.id);
    assert.deepEqual(attempts, [4], 'the failing call ended on its fourth attempt: one lost, three tries');
  });

  /** The attempt numbers of the mission's recorded model-call starts (the last attempt of each call). */
  async function startedAttempts(missionId: string): Promise<number[]> {
    let events: proto.temporal.api.history.v1.IHistoryEvent[] = [];
    await until(async () => {
      events = (await stack.handle(missionId).fetchHistory()).events ?? [];
      return events.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED);
    });
    const modelCalls = new Set(
      events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel').map((e) => Number(e.eventId)),
    );
    return events
      .filter((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
      .filter((e) => modelCalls.has(Number(e.activityTaskStartedEventAttributes!.scheduledEventId)))
      .map((e) => e.activityTaskStartedEventAttributes!.attempt!);
  }
});

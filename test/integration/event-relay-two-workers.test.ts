import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { findFinalEvents } from '../../db/missions.ts';
import { createEventRelay } from '../../events/relay.ts';
import { eventsQuery, type MissionEvent } from '../../contracts/events.ts';
import { skillMd, startTestStack, type TestStack } from '../../testkit/test-stack.ts';
import { until } from '../../testkit/until.ts';
import { spawnedWorkers } from '../helpers/worker-process.ts';

const HOUR_MS = 3_600_000;

// Production runs several worker processes, and model and tool calls have task queues of their own: the activity whose
// start proves a workflow task recorded mostly starts on another process than the one that ran the task. Here it always
// does: the stack's worker runs the workflows only, and a worker process of its own (bin/worker.ts) every model and
// tool call. The events must still come by push, each once and in order, with no events query.
describe('pushed events when the task and its activities run in two worker processes', () => {
  let stack: TestStack;
  let key: string;
  const workers = spawnedWorkers();
  before(async () => {
    stack = await startTestStack({ env: { WORKER_QUEUES: 'missions' } });
    await workers.spawn({ ...stack.env, WORKER_QUEUES: 'model,tools' });
    key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'apart', tools: ['lab.scan'], maxTurns: 4 }));
  });
  after(async () => {
    await workers.killAll();
    await stack?.stop();
  });

  it("delivers a watched mission's events once, in order, by push and not by the query", async () => {
    // A timer of an hour and a fresh stream that waits for its first events: only pushes (and the row) can bring them.
    const relay = createEventRelay({
      temporal: stack.temporal,
      logger: stack.logger,
      notifications: stack.notifications,
      fallbackPollMs: HOUR_MS,
      freshWaitMs: 30_000,
      storedEvents: async () => [],
      finalEvents: (missionId) => findFinalEvents(stack.db, missionId),
    });
    try {
      stack.tools.on('scan', async () => ({ body: { scanned: true } }));
      stack.model.enqueue(
        { reply: { toolUses: [{ id: 'tu_a', name: 'lab__scan', input: { target: 'a' } }] } },
        { reply: { toolUses: [{ id: 'tu_b', name: 'lab__scan', input: { target: 'b' } }] } },
        { reply: { toolUses: [{ id: 'tu_c', name: 'lab__scan', input: { target: 'c' } }] } },
        { reply: { text: 'scanned three' } },
      );
      const { id } = await stack.api.startMission(key, { skill: 'apart', objective: 'Scan three targets.' });
      const received: MissionEvent[] = [];
      let ended = false;
      const stop = relay.subscribe(id, { afterSeq: 0, fresh: true, onEvent: (e) => received.push(e), onEnd: () => (ended = true) });
      await until(() => ended, { what: 'the stream reached the terminal event', timeoutMs: 60_000 });
      stop();
      const log = (await stack.handle(id).query(eventsQuery, 0)).events;
      assert.deepEqual(received, log, 'every event once, in seq order, as the workflow recorded them');
      assert.deepEqual(received.at(-1), { ...received.at(-1), type: 'status', status: 'completed' });
      const counts = relay.queryCounts();
      // Not one event came by the query. A query may still be asked and find nothing: live text held past HOLD_MS for a
      // turn whose push is late on a loaded machine wakes the loop to read that turn (events/held-live.ts).
      assert.equal(counts.queries - counts.empty, 0, `no event came by the query: ${JSON.stringify(counts)}`);
      // The three tool calls and four model calls each released what their task logged; the end came from the row.
      assert.ok(counts.pushed >= 7, `events were pushed (${JSON.stringify(counts)})`);
      assert.equal(counts.endedFromRow, 1);
    } finally {
      relay.close();
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { Notifications } from '../../notify/notifications.ts';
import { encodeEventsProof, encodeEventsUnproven, encodeEventsWake } from '../../events/wire.ts';
import { createProgressSinks } from '../../events/progress-sinks.ts';
import { EVENTS_HEADER, type EventsCursor } from '../../contracts/events.ts';
import type { MissionEvent } from '../../contracts/events.ts';

const at = '2026-12-01T00:00:00.000Z';
const turn = (seq: number): MissionEvent => ({ seq, at, type: 'turn', turn: seq });
const unproven = (...seqs: number[]) => seqs.map((seq) => ({ event: turn(seq), digest: `d${seq}` }));

/** A worker's progress sinks over notifications that only record what was sent on the events channel. */
function harness(push = true) {
  const sent: string[] = [];
  const notifications = {
    notify: async (_channel: string, payload: string | readonly string[]) => void sent.push(...[payload].flat()),
    listen: () => () => {},
    close: async () => {},
  } as unknown as Notifications;
  const { sinks, interceptor } = createProgressSinks(notifications, { push });
  const info = (missionId: string) => ({ workflowId: `mission-${missionId}` }) as WorkflowInfo;
  return {
    sent,
    /** One activation's sink call: its events (seq → digest `d<seq>`) and the highest seq it claimed. */
    batch: (missionId: string, events: MissionEvent[], claimed: number, ended = false) =>
      void sinks.progress.logged.fn(info(missionId), {
        events: events.map((event) => ({ event, digest: `d${event.seq}` })),
        ended,
        claimed,
      }),
    /** An activity of the mission starts in this process with `cursor` in its header. */
    async start(missionId: string, cursor: EventsCursor) {
      const ctx = { info: { workflowExecution: { workflowId: `mission-${missionId}`, runId: 'r' } } };
      const { inbound } = interceptor(ctx as never);
      const input = { args: [], headers: { [EVENTS_HEADER]: defaultPayloadConverter.toPayload(cursor) } };
      return inbound!.execute!(input as never, async () => 'ran');
    },
    /** Lets the sink's end-of-turn flush and the batched NOTIFY run: each is a setImmediate, so two turns of the loop. */
    settle: async () => {
      await new Promise(setImmediate);
      await new Promise(setImmediate);
    },
  };
}

describe("the worker's progress sinks", () => {
  it('send the events an activity will claim at once, unproven, with their digests, in one payload', async () => {
    const h = harness();
    h.batch('m1', [turn(1)], 0);
    h.batch('m1', [turn(2)], 2); // a second activation of the same turn of the event loop
    await h.settle();
    assert.deepEqual(h.sent, [encodeEventsUnproven('m1', unproven(1, 2))], 'nothing waits in the worker for a start');
  });

  it('send a proof for every activity start with a cursor, whether or not this process ran the task, once per seq', async () => {
    const h = harness();
    assert.equal(await h.start('m2', { upTo: 2, digest: 'd2' }), 'ran', 'the activity runs as it would');
    await h.start('m2', { upTo: 2, digest: 'd2' }); // a second activity of the same task
    await h.start('m2', { upTo: 1, digest: 'd1' }); // an earlier cursor: settled by the proof of 2
    await h.start('m2', { upTo: 3, digest: 'd3' });
    await h.settle();
    assert.deepEqual(h.sent, [encodeEventsProof('m2', { upTo: 2, digest: 'd2' }), encodeEventsProof('m2', { upTo: 3, digest: 'd3' })]);
  });

  it('send events no activity will claim as a wake-up naming the last seq, and the terminal event at once', async () => {
    const h = harness();
    h.batch('m3', [turn(1), turn(2)], 1);
    await h.settle();
    assert.deepEqual(h.sent, [encodeEventsWake('m3', 2)], 'an event logged after the activity was scheduled: a wake-up');
    h.batch('m3', [turn(3), { seq: 4, at, type: 'status', status: 'completed' }], 0, true);
    await h.settle();
    assert.deepEqual(h.sent.slice(1), [encodeEventsWake('m3', 4, true)], 'the terminal event ends the batch: read from the row');
  });

  it("replace a task's events logged again in the same turn of the loop, as a task run again logs them", async () => {
    const h = harness();
    h.batch('m4', [turn(1), turn(2)], 2);
    const rerun: MissionEvent = { seq: 2, at, type: 'status', status: 'cancelled' };
    h.batch('m4', [rerun], 2);
    await h.settle();
    assert.deepEqual(h.sent, [encodeEventsUnproven('m4', [...unproven(1), { event: rerun, digest: 'd2' }])]);
  });

  it('without pushes, send every event as a wake-up and no proof', async () => {
    const h = harness(false);
    h.batch('m5', [turn(1)], 1);
    await h.start('m5', { upTo: 1, digest: 'd1' });
    await h.settle();
    assert.deepEqual(h.sent, [encodeEventsWake('m5', 1)]);
  });
});

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { Notifications } from '../../notify/notifications.ts';
import { encodeEventsWake, parseEventsPush } from '../../events/wire.ts';
import { createProgressSinks } from '../../events/progress-sinks.ts';
import { EVENTS_HEADER, type EventsCursor } from '../../contracts/events.ts';
import type { MissionEvent } from '../../contracts/events.ts';

const at = '2026-12-01T00:00:00.000Z';
const turn = (seq: number): MissionEvent => ({ seq, at, type: 'turn', turn: seq });

/** A worker's progress sinks over notifications that only record what was sent on the events channel. */
function harness(claimWaitMs = 1_000) {
  const sent: string[] = [];
  const notifications = {
    notify: async (_channel: string, payload: string | readonly string[]) => void sent.push(...[payload].flat()),
    listen: () => () => {},
    close: async () => {},
  } as unknown as Notifications;
  const { sinks, interceptor } = createProgressSinks(notifications, { claimWaitMs });
  const info = (missionId: string) => ({ workflowId: `mission-${missionId}` }) as WorkflowInfo;
  return {
    sent,
    /** An activation logged `event` alone, the digest after it being `digest`. */
    logged: (missionId: string, event: MissionEvent, digest: string, ended = false) =>
      void sinks.progress.logged.fn(info(missionId), { events: [{ event, digest }], ended, claimed: 0 }),
    /** An activation scheduled an activity with the cursor at `upTo` and logged nothing. */
    claimed: (missionId: string, upTo: number) =>
      void sinks.progress.logged.fn(info(missionId), { events: [], ended: false, claimed: upTo }),
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
    /**
     * Lets the sink's end-of-turn flush and the batched NOTIFY run: each is a setImmediate, so two turns of the event
     * loop, whatever the machine's load (a 5 ms sleep could end between the two).
     */
    settle: async () => {
      await new Promise(setImmediate);
      await new Promise(setImmediate);
    },
  };
}

describe("the worker's progress sinks", () => {
  it('push the events an activity start claims in one payload, once, and send no wake-up for them', async () => {
    const h = harness();
    h.logged('m1', turn(1), 'd1');
    h.logged('m1', turn(2), 'd2');
    h.claimed('m1', 2);
    await h.settle();
    assert.deepEqual(h.sent, [], 'claimed events wait for the start');
    assert.equal(await h.start('m1', { upTo: 2, digest: 'd2' }), 'ran', 'the activity runs as it would');
    await h.start('m1', { upTo: 2, digest: 'd2' }); // a second activity of the same task
    await h.settle();
    assert.equal(h.sent.length, 1);
    assert.deepEqual(parseEventsPush(h.sent[0]!), { missionId: 'm1', events: [turn(1), turn(2)] });
  });

  it("take an activation's events and claim in one call: the claimed ones pushed at the start, the rest woken at once", async () => {
    const h = harness();
    h.batch('m6', [turn(1), turn(2)], 2);
    await h.settle();
    assert.deepEqual(h.sent, [], 'every event of the activation is claimed: they wait for the start');
    await h.start('m6', { upTo: 2, digest: 'd2' });
    await h.settle();
    assert.deepEqual(parseEventsPush(h.sent[0]!), { missionId: 'm6', events: [turn(1), turn(2)] });
    h.batch('m6', [turn(3), turn(4)], 3);
    await h.settle();
    assert.deepEqual(h.sent.slice(1), [encodeEventsWake('m6', 4)], 'an event logged after the activity was scheduled: a wake-up');
    h.batch('m6', [turn(5), { seq: 6, at, type: 'status', status: 'completed' }], 0, true);
    await h.settle();
    assert.deepEqual(h.sent.slice(2), [encodeEventsWake('m6', 6, true)], 'the terminal event ends the batch: read from the row');
  });

  it('send events no activity will claim at once, as a wake-up naming the last seq', async () => {
    const h = harness();
    h.logged('m2', turn(1), 'd1');
    h.logged('m2', turn(2), 'd2');
    h.claimed('m2', 1);
    await h.settle();
    assert.deepEqual(h.sent, [encodeEventsWake('m2', 2)]);
  });

  it('never push events held from another run of the task: a start whose digest differs sends a wake-up instead', async () => {
    const h = harness();
    h.logged('m3', turn(1), 'lost-run');
    h.claimed('m3', 1);
    await h.settle();
    await h.start('m3', { upTo: 1, digest: 'recorded-run' });
    await h.settle();
    assert.deepEqual(h.sent, [encodeEventsWake('m3', 1)], 'the relay reads the recorded events by the query');
  });

  it('replace held events when the task runs again, and push the new run once its activity starts', async () => {
    const h = harness();
    h.logged('m4', turn(1), 'a1');
    h.logged('m4', turn(2), 'a2');
    h.claimed('m4', 2);
    const rerun: MissionEvent = { seq: 2, at, type: 'status', status: 'cancelled' };
    h.logged('m4', rerun, 'b2');
    h.claimed('m4', 2);
    await h.start('m4', { upTo: 2, digest: 'b2' });
    await h.settle();
    assert.deepEqual(parseEventsPush(h.sent[0]!)?.events, [turn(1), rerun]);
  });

  it('send claimed events as a wake-up when no start comes within the wait, and the terminal one at once', async () => {
    const h = harness(20);
    h.logged('m5', turn(1), 'd1');
    h.claimed('m5', 1);
    await sleep(60);
    await h.settle();
    assert.deepEqual(h.sent, [encodeEventsWake('m5', 1)]);
    h.logged('m5', turn(2), 'd2');
    h.claimed('m5', 2);
    h.logged('m5', { seq: 3, at, type: 'status', status: 'completed' }, 'd3', true);
    await sleep(60);
    await h.settle();
    assert.deepEqual(h.sent.slice(1), [encodeEventsWake('m5', 3, true)], 'the final events are read from the row: nothing else');
  });
});

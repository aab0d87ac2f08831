import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LiveEvent, MissionEvent } from '../../contracts/events.ts';
import { liveArrived, releaseHeld } from '../../events/held-live.ts';
import { newPoller, type Subscriber } from '../../events/poller.ts';
import { createPushedLogs } from '../../events/pushed-logs.ts';

const at = '2026-12-03T00:00:00.000Z';
const turn = (seq: number, n: number): MissionEvent => ({ seq, at, type: 'turn', turn: n });
const status = (seq: number): MissionEvent => ({ seq, at, type: 'status', status: 'running' });

test('a pushed log is kept only while whole: from seq 1, without a gap, and no wake-up past it', () => {
  const logs = createPushedLogs();
  logs.pushed('a', [status(1), turn(2, 1)]);
  logs.pushed('a', [turn(3, 2)]);
  assert.deepEqual(
    logs.log('a')?.map((e) => e.seq),
    [1, 2, 3],
  );

  logs.pushed('b', [turn(2, 1)]);
  assert.equal(logs.log('b'), undefined, 'not from the start');
  logs.pushed('c', [status(1)]);
  logs.pushed('c', [turn(3, 2)]);
  assert.equal(logs.log('c'), undefined, 'a gap');

  logs.pushed('d', [status(1)]);
  logs.wokenUp('d', 4, false);
  assert.equal(logs.log('d'), undefined, 'a wake-up named events that were not pushed');
  logs.pushed('e', [status(1), turn(2, 1)]);
  logs.wokenUp('e', 2, false);
  assert.deepEqual(
    logs.log('e')?.map((e) => e.seq),
    [1, 2],
    'a wake-up for what was pushed leaves it whole',
  );
  logs.wokenUp('e', 2, true);
  assert.equal(logs.log('e'), undefined, 'the end is read from the row');
});

test("live text of a turn not read yet waits for that turn's event; once read, it goes in order", () => {
  const p = newPoller([status(1), turn(2, 1)]);
  const seen: LiveEvent[] = [];
  const sub: Subscriber = { afterSeq: 2, onEvent: () => {}, onLive: (e) => seen.push(e), onEnd: () => {} };
  p.subs.add(sub);

  liveArrived(p, { type: 'text_delta', turn: 1, text: 'now' });
  assert.deepEqual(seen, [{ type: 'text_delta', turn: 1, text: 'now' }], 'its turn was read: sent at once');

  liveArrived(p, { type: 'text_delta', turn: 2, text: 'early' });
  liveArrived(p, { type: 'tool_progress', toolUseId: 'tu_1', progress: 1 });
  assert.equal(seen.length, 1, 'turn 2 not read: held, and what follows it too');
  assert.equal(p.woken, false, "the loop is not woken: the turn's own notification is on its way");
  releaseHeld(p);
  assert.equal(seen.length, 1, 'still not read');

  p.events.push(turn(3, 2));
  releaseHeld(p);
  assert.deepEqual(
    seen.slice(1).map((e) => e.type),
    ['text_delta', 'tool_progress'],
  );
  assert.equal(p.held.length, 0);
});

test('live text whose turn is not read within the hold goes anyway, and the loop is woken to read the turn', async () => {
  const p = newPoller([status(1)]);
  const seen: LiveEvent[] = [];
  p.subs.add({ afterSeq: 1, onEvent: () => {}, onLive: (e) => seen.push(e), onEnd: () => {} });
  liveArrived(p, { type: 'text_delta', turn: 1, text: 'early' });
  assert.equal(seen.length, 0, 'held');
  await new Promise((ok) => setTimeout(ok, 400));
  assert.deepEqual(seen, [{ type: 'text_delta', turn: 1, text: 'early' }], 'sent once the hold is over');
  assert.equal(p.woken, true, 'the loop asks the query for the turn whose notification never came');
});

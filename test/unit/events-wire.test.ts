import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeEventsPush, encodeEventsWake, parseEventsPush, parseEventsWake } from '../../events/wire.ts';
import { NOTIFY_MAX_BYTES } from '../../notify/notifications.ts';
import type { MissionEvent } from '../../contracts/events.ts';

test('an events wake-up names the mission and its last seq; a bare mission id (an earlier worker) names no seq', () => {
  const id = '0b6f7d4e-2f5a-4c1e-9a51-3f1d2a7c9e10';
  assert.deepEqual(parseEventsWake(encodeEventsWake(id, 7)), { missionId: id, lastSeq: 7 });
  assert.deepEqual(parseEventsWake(id), { missionId: id });
  assert.deepEqual(parseEventsWake(`${id}:x`), { missionId: `${id}:x` });
});

test("the terminal event's wake-up says the mission ended; `end` without a seq is no seq", () => {
  const id = '0b6f7d4e-2f5a-4c1e-9a51-3f1d2a7c9e10';
  assert.deepEqual(parseEventsWake(encodeEventsWake(id, 12, true)), { missionId: id, lastSeq: 12, ended: true });
  assert.deepEqual(parseEventsWake(encodeEventsWake(id, 12, false)), { missionId: id, lastSeq: 12 });
  assert.deepEqual(parseEventsWake(`${id}:end`), { missionId: `${id}:end` });
});

test('pushed events travel as JSON (never read as a wake-up); events too big for a NOTIFY are not encoded', () => {
  const id = '0b6f7d4e-2f5a-4c1e-9a51-3f1d2a7c9e10';
  const events: MissionEvent[] = [
    { seq: 3, at: '2026-12-01T00:00:00.000Z', type: 'turn', turn: 1 },
    { seq: 4, at: '2026-12-01T00:00:00.001Z', type: 'tool_start', toolUseId: 'tu_1', tool: 'lab.lookup', turn: 1 },
  ];
  const payload = encodeEventsPush(id, events)!;
  assert.deepEqual(parseEventsPush(payload), { missionId: id, events });
  assert.equal(parseEventsPush(encodeEventsWake(id, 4)), undefined, 'a wake-up is no push');
  assert.equal(parseEventsPush('{"missionId":"m","events":[]}'), undefined, 'a push of nothing is none');
  assert.equal(parseEventsPush('{not json'), undefined);
  const big: MissionEvent[] = [
    { seq: 1, at: '2026-12-01T00:00:00.000Z', type: 'error', phase: 'model', message: 'x'.repeat(NOTIFY_MAX_BYTES) },
  ];
  assert.equal(encodeEventsPush(id, big), undefined);
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeEventsWake, parseEventsWake } from '../../notify/events-wake.ts';

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

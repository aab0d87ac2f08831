import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeEventsProof, encodeEventsUnproven, encodeEventsWake, parseEventsJson, parseEventsWake } from '../../events/wire.ts';
import { NOTIFY_MAX_BYTES } from '../../notify/notifications.ts';
import type { MissionEvent } from '../../contracts/events.ts';

const id = '0b6f7d4e-2f5a-4c1e-9a51-3f1d2a7c9e10';

test('an events wake-up names the mission and its last seq; a bare mission id (an earlier worker) names no seq', () => {
  assert.deepEqual(parseEventsWake(encodeEventsWake(id, 7)), { missionId: id, lastSeq: 7 });
  assert.deepEqual(parseEventsWake(id), { missionId: id });
  assert.deepEqual(parseEventsWake(`${id}:x`), { missionId: `${id}:x` });
});

test("the terminal event's wake-up says the mission ended; `end` without a seq is no seq", () => {
  assert.deepEqual(parseEventsWake(encodeEventsWake(id, 12, true)), { missionId: id, lastSeq: 12, ended: true });
  assert.deepEqual(parseEventsWake(encodeEventsWake(id, 12, false)), { missionId: id, lastSeq: 12 });
  assert.deepEqual(parseEventsWake(`${id}:end`), { missionId: `${id}:end` });
});

test('unproven events travel as JSON with their digests (never read as a wake-up); too big for a NOTIFY, not encoded', () => {
  const unproven = [
    { event: { seq: 3, at: '2026-12-01T00:00:00.000Z', type: 'turn', turn: 1 } as MissionEvent, digest: '0a1b2c3d' },
    {
      event: { seq: 4, at: '2026-12-01T00:00:00.001Z', type: 'tool_start', toolUseId: 'tu_1', tool: 'lab.lookup', turn: 1 } as MissionEvent,
      digest: '4e5f6a7b',
    },
  ];
  const payload = encodeEventsUnproven(id, unproven)!;
  assert.deepEqual(parseEventsJson(payload), { missionId: id, unproven });
  assert.equal(parseEventsJson(encodeEventsWake(id, 4)), undefined, 'a wake-up is neither');
  assert.equal(parseEventsJson('{"missionId":"m","unproven":[]}'), undefined, 'nothing unproven is nothing');
  assert.equal(parseEventsJson('{not json'), undefined);
  const big = [
    {
      event: {
        seq: 1,
        at: '2026-12-01T00:00:00.000Z',
        type: 'error',
        phase: 'model',
        message: 'x'.repeat(NOTIFY_MAX_BYTES),
      } as MissionEvent,
      digest: '00000000',
    },
  ];
  assert.equal(encodeEventsUnproven(id, big), undefined);
});

test('a proof is the mission and the events cursor (seq and digest); one without either is no proof', () => {
  assert.deepEqual(parseEventsJson(encodeEventsProof(id, { upTo: 9, digest: 'cafe0123' })), {
    missionId: id,
    proof: { upTo: 9, digest: 'cafe0123' },
  });
  assert.equal(parseEventsJson(JSON.stringify({ missionId: id, proof: { upTo: 9 } })), undefined);
  assert.equal(parseEventsJson(JSON.stringify({ missionId: id, proof: { upTo: 0, digest: 'x' } })), undefined);
});

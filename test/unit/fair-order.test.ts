import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pickAdmissions, type QueuedMission } from '../../admission/fair-order.ts';

const q = (id: string, tenantId: string, userId: string): QueuedMission => ({ id, tenantId, userId });

test('each user’s missions start oldest first, up to the per-user limit', () => {
  const queued = [q('a1', 't', 'a'), q('a2', 't', 'a'), q('a3', 't', 'a')];
  assert.deepEqual(pickAdmissions([{ tenantId: 't', userId: 'a', count: 1 }], queued, { perUser: 2, perTenant: undefined }), ['a1']);
  assert.deepEqual(pickAdmissions([], queued, { perUser: 2, perTenant: undefined }), ['a1', 'a2']);
});

test('a full tenant’s slots go to its users in turn, not to the longest backlog', () => {
  // a queued three missions before b queued one; the tenant has room for two more.
  const queued = [q('a1', 't', 'a'), q('a2', 't', 'a'), q('a3', 't', 'a'), q('b1', 't', 'b')];
  assert.deepEqual(pickAdmissions([], queued, { perUser: undefined, perTenant: 2 }), ['a1', 'b1']);
  // a already runs one: the next free slot is b's even though a's mission waited longer.
  assert.deepEqual(pickAdmissions([{ tenantId: 't', userId: 'a', count: 1 }], queued, { perUser: undefined, perTenant: 2 }), ['b1']);
});

test('one tenant’s backlog that cannot start never blocks another tenant', () => {
  const queued = [...Array.from({ length: 50 }, (_, i) => q(`x${i}`, 'big', 'x')), q('y1', 'small', 'y')];
  const held = [{ tenantId: 'big', userId: 'x', count: 3 }];
  assert.deepEqual(pickAdmissions(held, queued, { perUser: 3, perTenant: 3 }), ['y1']);
});

test('free slots go first to the tenant running the fewest missions, and no limit is exceeded', () => {
  const queued = [q('a1', 't1', 'a'), q('a2', 't1', 'a'), q('b1', 't2', 'b'), q('b2', 't2', 'b')];
  const held = [{ tenantId: 't1', userId: 'a', count: 1 }];
  assert.deepEqual(pickAdmissions(held, queued, { perUser: 2, perTenant: 2 }), ['b1', 'a1', 'b2']);
});

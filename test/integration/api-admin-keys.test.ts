import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestStack, type TestStack } from '../../testkit/test-stack.ts';

describe('admin API: listing and revoking keys', () => {
  let stack: TestStack;
  let admin: string;
  before(async () => {
    stack = await startTestStack({ worker: false });
    admin = stack.config.adminKey!;
  });
  after(() => stack.stop());

  const issue = async (tenantId: string, userId: string, capabilities: string[]) => {
    const res = await stack.api.request('POST', '/api/v1/admin/keys', { key: admin, body: { tenantId, userId, capabilities } });
    assert.equal(res.status, 201);
    return res.body as { id: string; key: string };
  };
  const listKeys = async (query = '') => {
    const res = await stack.api.request('GET', `/api/v1/admin/keys${query}`, { key: admin });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as { items: Array<Record<string, unknown>>; nextCursor: string | null };
  };

  it('lists keys with tenant, user, capabilities, creation and last use, never the secret', async () => {
    const a = await issue('listing', 'ann', ['mission.read']);
    const b = await issue('listing', 'bob', ['skill.read', 'skill.write']);
    const page = await listKeys('?tenantId=listing');
    assert.deepEqual(
      page.items.map((k) => k.id),
      [b.id, a.id],
      'newest first',
    );
    const ann = page.items.find((k) => k.id === a.id)!;
    assert.deepEqual(Object.keys(ann).sort(), [
      'capabilities',
      'createdAt',
      'id',
      'lastUsedAt',
      'prefix',
      'revokedAt',
      'tenantId',
      'userId',
    ]);
    assert.equal(ann.tenantId, 'listing');
    assert.equal(ann.userId, 'ann');
    assert.deepEqual(ann.capabilities, ['mission.read']);
    assert.equal(ann.lastUsedAt, null, 'never used yet');
    assert.equal(ann.revokedAt, null);
    assert.ok(Date.parse(String(ann.createdAt)) > Date.now() - 60_000);
    assert.ok(a.key.startsWith(String(ann.prefix)) && String(ann.prefix).length < 12, 'a short prefix to recognise the key by');
    const text = JSON.stringify(page);
    for (const secret of [a.key, b.key]) assert.ok(!text.includes(secret) && !text.includes(secret.slice(8)), 'no secret in the list');
  });

  it('records when a key was last used', async () => {
    const k = await issue('usage', 'una', ['mission.read']);
    const before = Date.now();
    assert.equal((await stack.api.request('GET', '/api/v1/missions', { key: k.key })).status, 200);
    const [row] = (await listKeys('?tenantId=usage')).items;
    assert.ok(row!.lastUsedAt, 'lastUsedAt is set');
    assert.ok(Date.parse(String(row!.lastUsedAt)) >= before - 1_000);
  });

  it('filters by user and status, and pages', async () => {
    await issue('paging', 'p1', ['mission.read']);
    await issue('paging', 'p1', ['mission.read']);
    const other = await issue('paging', 'p2', ['mission.read']);
    assert.deepEqual(
      (await listKeys('?tenantId=paging&userId=p2')).items.map((k) => k.id),
      [other.id],
    );
    const first = await listKeys('?tenantId=paging&limit=2');
    assert.equal(first.items.length, 2);
    assert.ok(first.nextCursor);
    const second = await listKeys(`?tenantId=paging&limit=2&cursor=${first.nextCursor}`);
    assert.equal(second.items.length, 1);
    assert.equal(new Set([...first.items, ...second.items].map((k) => k.id)).size, 3);
  });

  it('revokes a key at once: the very next request with it is 401', async () => {
    const k = await issue('revoking', 'rae', ['mission.read']);
    assert.equal((await stack.api.request('GET', '/api/v1/missions', { key: k.key })).status, 200);
    const del = await stack.api.request('DELETE', `/api/v1/admin/keys/${k.id}`, { key: admin });
    assert.equal(del.status, 200, JSON.stringify(del.body));
    assert.equal(del.body.id, k.id);
    assert.ok(del.body.revokedAt);
    const after = await stack.api.request('GET', '/api/v1/missions', { key: k.key });
    assert.equal(after.status, 401);
    assert.equal(after.body.error.code, 'unauthorized');

    const again = await stack.api.request('DELETE', `/api/v1/admin/keys/${k.id}`, { key: admin });
    assert.equal(again.status, 200);
    assert.equal(again.body.revokedAt, del.body.revokedAt, 'revoking twice keeps the first time');
    assert.deepEqual(
      (await listKeys('?tenantId=revoking&status=revoked')).items.map((x) => x.id),
      [k.id],
    );
    assert.deepEqual((await listKeys('?tenantId=revoking&status=active')).items, []);
  });

  it('answers 404 for a key that does not exist', async () => {
    for (const id of ['00000000-0000-0000-0000-000000000000', 'not-a-key-id']) {
      const res = await stack.api.request('DELETE', `/api/v1/admin/keys/${id}`, { key: admin });
      assert.equal(res.status, 404);
      assert.equal(res.body.error.code, 'not_found');
    }
  });

  it('is closed to user keys, and answers an unknown filter with 400', async () => {
    const k = await issue('closed', 'cy', ['mission.run', 'mission.read', 'skill.read', 'skill.write', 'skill.review']);
    assert.equal((await stack.api.request('GET', '/api/v1/admin/keys', { key: k.key })).status, 401);
    assert.equal((await stack.api.request('DELETE', `/api/v1/admin/keys/${k.id}`, { key: k.key })).status, 401);
    assert.equal((await stack.api.request('GET', '/api/v1/missions', { key: k.key })).status, 200, 'the key still works');
    const bad = await stack.api.request('GET', '/api/v1/admin/keys?tenant=x', { key: admin });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.error.details.fields, [{ field: 'tenant', message: 'unknown field' }]);
  });
});

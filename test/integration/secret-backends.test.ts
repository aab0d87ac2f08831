import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { createPostgresSecretBackend } from '../../secrets/postgres-backend.ts';
import type { SecretBackend } from '../../secrets/secret-backend.ts';
import { createSecretCipher } from '../../secrets/secret-cipher.ts';
import { createVaultSecretBackend } from '../../secrets/vault-backend.ts';
import { startOpenBao } from '../helpers/openbao-server.ts';
import { createTestDatabase } from '../../testkit/test-database.ts';
import { skillMd, startTestStack } from '../../testkit/test-stack.ts';

const alice = { tenantId: 'acme', userId: 'alice' };
const bob = { tenantId: 'acme', userId: 'bob' };

/** The same behaviour from every backend the secret store can sit on. */
function backendContract(kind: string, open: () => Promise<{ backend: SecretBackend; close(): Promise<void> }>) {
  describe(`the ${kind} secret backend`, () => {
    let backend: SecretBackend;
    let close: () => Promise<void>;
    before(async () => ({ backend, close } = await open()));
    after(() => close());

    it('stores, replaces, lists, reads by user then tenant, and deletes keys', async () => {
      assert.equal(backend.writable, true);
      assert.equal((await backend.put(alice, 'brave', 'alice-1')).created, true);
      const replaced = await backend.put(alice, 'brave', 'alice-2');
      assert.equal(replaced.created, false);
      assert.ok(replaced.setAt instanceof Date && !Number.isNaN(replaced.setAt.getTime()));
      await backend.put(alice, 'tavily', 'alice-tavily');
      await backend.put({ tenantId: 'acme' }, 'brave', 'tenant-brave');
      assert.deepEqual(
        (await backend.list(alice)).map((s) => s.provider),
        ['brave', 'tavily'],
      );
      assert.deepEqual(
        (await backend.list({ tenantId: 'acme' })).map((s) => s.provider),
        ['brave'],
      );
      assert.deepEqual(await backend.list({ tenantId: 'acme', userId: 'nobody' }), []);
      assert.deepEqual(await backend.read(alice, 'brave'), { value: 'alice-2', source: 'user' });
      assert.deepEqual(await backend.read(bob, 'brave'), { value: 'tenant-brave', source: 'tenant' });
      assert.equal(await backend.read(bob, 'tavily'), undefined);
      assert.equal(await backend.read({ tenantId: 'globex', userId: 'alice' }, 'brave'), undefined, 'tenants are apart');
      assert.deepEqual([...(await backend.present(bob, ['brave', 'tavily']))], [['brave', 'tenant']]);
      assert.equal(await backend.delete(alice, 'brave'), true);
      assert.equal(await backend.delete(alice, 'brave'), false);
      assert.deepEqual(await backend.read(alice, 'brave'), { value: 'tenant-brave', source: 'tenant' }, 'falls back to the tenant');
      assert.equal((await backend.put(alice, 'brave', 'alice-3')).created, true, 'new again once deleted');
    });
  });
}

backendContract('Postgres', async () => {
  const database = await createTestDatabase();
  return { backend: createPostgresSecretBackend(database.db, createSecretCipher([randomBytes(32)])), close: () => database.drop() };
});

backendContract('Vault KV v2 (a real OpenBao dev server)', async () => {
  const bao = await startOpenBao();
  return {
    backend: createVaultSecretBackend({ address: bao.address, token: bao.token, mount: 'secret', prefix: 'cadenza' }),
    close: () => bao.stop(),
  };
});

describe('a mission whose provider key lives in OpenBao', () => {
  it('sends the key from Vault to the tool, and stores nothing in Postgres', async () => {
    const bao = await startOpenBao();
    const stack = await startTestStack({
      env: {
        APPS_DIR: fileURLToPath(new URL('../fixtures/provider-apps', import.meta.url)),
        SECRETS_BACKEND: 'vault',
        VAULT_ADDR: bao.address,
        VAULT_TOKEN: bao.token,
      },
    });
    try {
      const value = `vault-brave-${randomBytes(8).toString('hex')}`;
      const key = await stack.api.newKey();
      assert.equal((await stack.api.request('PUT', '/api/v1/secrets/brave', { key, body: { value } })).status, 201);
      await stack.api.createSkill(key, skillMd({ name: 'vaulted', tools: ['search.web_search'], maxTurns: 2 }));
      stack.model.enqueue(
        { reply: { toolUses: [{ id: 'tu_v', name: 'search__web_search', input: { q: 'x' } }] } },
        { reply: { text: 'ok' } },
      );
      const { id } = await stack.api.startMission(key, { skill: 'vaulted', objective: 'Search.' });
      assert.equal((await stack.api.waitForEnd(key, id)).tools[0]?.status, 'completed');
      assert.ok(stack.tools.requests.some((r) => r.tool === 'web_search' && r.headers.authorization === `Bearer ${value}`));
      assert.deepEqual(await stack.db.selectFrom('provider_secrets').selectAll().execute(), []);
    } finally {
      await stack.stop();
      await bao.stop();
    }
  });
});

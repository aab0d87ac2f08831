import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../lib/logger.ts';
import { EMBEDDED_KEY_FILE, resolveSecretCipher } from '../../secrets/master-key.ts';
import { createPostgresSecretBackend, SecretsUnavailableError } from '../../secrets/postgres-backend.ts';
import { reencryptSecrets } from '../../secrets/reencrypt.ts';
import { createSecretCipher, SecretCipherError } from '../../secrets/secret-cipher.ts';
import { createSecretStore } from '../../secrets/secret-store.ts';
import { createTestDatabase } from '../../testkit/test-database.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const quiet = createLogger({ level: 'error' });
const alice = { tenantId: 'acme', userId: 'alice' };
const bob = { tenantId: 'acme', userId: 'bob' };

describe('the secret store on Postgres', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const keyA = randomBytes(32);
  const keyB = randomBytes(32);
  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database.drop());

  it('seals with AES-256-GCM: a tampered ciphertext or a row copied onto another owner does not open', async () => {
    const cipher = createSecretCipher([keyA]);
    const sealed = cipher.seal('brv-secret-value', 'aad-1');
    assert.equal(cipher.open(sealed, 'aad-1'), 'brv-secret-value');
    assert.ok(!sealed.ciphertext.toString('latin1').includes('brv-secret-value'));
    const flipped = Buffer.from(sealed.ciphertext);
    flipped[0]! ^= 1;
    assert.throws(() => cipher.open({ ...sealed, ciphertext: flipped }, 'aad-1'), SecretCipherError);
    assert.throws(
      () => cipher.open(sealed, 'aad-2'),
      (err: Error) => err instanceof SecretCipherError && !err.message.includes('brv'),
    );

    const store = createSecretStore(createPostgresSecretBackend(database.db, cipher), {});
    await store.put(alice, 'brave', 'alice-brave-key');
    // Copy Alice's sealed row onto Bob: the authenticated data names the owner, so it will not open as Bob's.
    const row = await database.db.selectFrom('provider_secrets').selectAll().where('user_id', '=', 'alice').executeTakeFirstOrThrow();
    await database.db
      .insertInto('provider_secrets')
      .values({ ...row, user_id: 'bob' })
      .execute();
    await assert.rejects(store.resolve(bob, 'brave'), SecretCipherError);
    assert.deepEqual(await store.resolve(alice, 'brave'), { value: 'alice-brave-key', source: 'user' });
    await store.delete(bob, 'brave');
  });

  it('looks up user → tenant → server, and says where a key would come from without reading it', async () => {
    const store = createSecretStore(createPostgresSecretBackend(database.db, createSecretCipher([keyA])), { tavily: 'server-tavily' });
    await store.put({ tenantId: 'acme' }, 'brave', 'tenant-brave-key');
    assert.deepEqual(await store.resolve(bob, 'brave'), { value: 'tenant-brave-key', source: 'tenant' });
    assert.deepEqual(await store.resolve(alice, 'brave'), { value: 'alice-brave-key', source: 'user' });
    assert.deepEqual(await store.resolve(bob, 'tavily'), { value: 'server-tavily', source: 'server' });
    assert.equal(await store.resolve({ tenantId: 'globex', userId: 'bob' }, 'brave'), undefined, 'tenants do not share keys');
    assert.deepEqual(
      [...(await store.sources(bob, ['brave', 'tavily', 'nosuch']))],
      [
        ['brave', 'tenant'],
        ['tavily', 'server'],
      ],
    );
  });

  it('rotates: a new key first opens old rows, the re-encrypt command reseals them, then the old key can go', async () => {
    const rotated = createSecretCipher([keyB, keyA]);
    const store = createSecretStore(createPostgresSecretBackend(database.db, rotated), {});
    assert.deepEqual(await store.resolve(alice, 'brave'), { value: 'alice-brave-key', source: 'user' });

    const env = {
      ...process.env,
      DATABASE_URL: database.url,
      SECRETS_MASTER_KEY: `${keyB.toString('base64')},${keyA.toString('hex')}`,
      LOG_LEVEL: 'error',
    };
    const { stdout } = await run(process.execPath, [join(ROOT, 'bin/reencrypt-secrets.ts')], { env, cwd: ROOT });
    assert.match(stdout, new RegExp(`re-encrypted 2 provider key\\(s\\) under master key ${rotated.currentKeyId}`));
    const ids = await database.db.selectFrom('provider_secrets').select('key_id').execute();
    assert.deepEqual([...new Set(ids.map((r) => r.key_id))], [rotated.currentKeyId]);

    const onlyNew = createSecretStore(createPostgresSecretBackend(database.db, createSecretCipher([keyB])), {});
    assert.deepEqual(await onlyNew.resolve(alice, 'brave'), { value: 'alice-brave-key', source: 'user' });
    assert.deepEqual(await reencryptSecrets(database.db, createSecretCipher([keyB])), { resealed: 0, unreadable: [] });
    const report = await reencryptSecrets(database.db, createSecretCipher([randomBytes(32)]));
    assert.equal(report.resealed, 0);
    assert.equal(report.unreadable.length, 2, 'rows under a key the configuration no longer holds are reported, not lost');
  });

  it('refuses writes, and says so, without a master key', async () => {
    const store = createSecretStore(createPostgresSecretBackend(database.db, undefined), { brave: 'server-brave' });
    assert.equal(store.writable, false);
    await assert.rejects(store.put(alice, 'brave', 'x'), SecretsUnavailableError);
    assert.deepEqual(await store.resolve({ tenantId: 'none', userId: 'x' }, 'brave'), { value: 'server-brave', source: 'server' });
  });
});

describe('the master key', () => {
  it('is generated once under the data dir for the embedded stack, kept private, and said so in one log line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cadenza-secrets-'));
    try {
      const lines: string[] = [];
      const logger = createLogger({ write: (l) => void lines.push(l) });
      const first = await resolveSecretCipher({ masterKeys: [], dataDir: join(dir, 'data'), embedded: true, logger });
      const file = join(dir, 'data', EMBEDDED_KEY_FILE);
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      assert.equal(lines.length, 1);
      assert.match(JSON.parse(lines[0]!).msg, /generated a master key/);
      assert.ok(!lines[0]!.includes((await readFile(file, 'utf8')).trim()), 'the log names the file, not the key');
      const again = await resolveSecretCipher({ masterKeys: [], dataDir: join(dir, 'data'), embedded: true, logger: quiet });
      assert.equal(again?.open(first!.seal('kept', 'a'), 'a'), 'kept', 'a restart reuses the same key');
      assert.equal(await resolveSecretCipher({ masterKeys: [], dataDir: join(dir, 'data'), embedded: false, logger: quiet }), undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createDatabase, type DatabaseHandle } from '../../db/database.ts';
import { CHANNELS } from '../../notify/notifications.ts';
import { createEmptyTestDatabase } from '../../testkit/test-database.ts';
import { until } from '../../testkit/until.ts';

// A notification is a wake-up that a waiting user feels (a cancel reaching its tool, an event reaching the stream):
// it must not queue behind the process's other statements for a pool connection.
describe('notifications on Postgres', () => {
  let database: { url: string; drop(): Promise<void> };
  let handle: DatabaseHandle;
  before(async () => {
    database = await createEmptyTestDatabase();
    handle = await createDatabase({ databaseUrl: database.url, dataDir: '.data', poolSize: 1 });
  });
  after(async () => {
    await handle?.notifications.close();
    await handle?.db.destroy();
    await database?.drop();
  });

  it('are sent while every pool connection is held by other work, in the order sent', async () => {
    const heard: string[] = [];
    handle.notifications.listen(CHANNELS.toolCancel, (payload) => heard.push(payload));
    // The listener is up once it hears one.
    await until(
      async () => {
        await handle.notifications.notify(CHANNELS.toolCancel, 'ready');
        return heard.includes('ready');
      },
      { what: 'the listener heard its first notification' },
    );
    let release!: () => void;
    const released = new Promise<void>((ok) => (release = ok));
    let holding!: () => void;
    const held = new Promise<void>((ok) => (holding = ok));
    // The pool's one connection, inside a transaction until released.
    const work = handle.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      holding();
      await released;
    });
    await held;
    try {
      void handle.notifications.notify(CHANNELS.toolCancel, 'm1/tu_1');
      void handle.notifications.notify(CHANNELS.toolCancel, ['m1/tu_2', 'm1/tu_3']);
      await until(() => heard.includes('m1/tu_3'), { timeoutMs: 10_000, what: 'the notifications were heard while the pool was busy' });
      assert.deepEqual(heard.slice(-3), ['m1/tu_1', 'm1/tu_2', 'm1/tu_3']);
    } finally {
      release();
      await work;
    }
  });
});

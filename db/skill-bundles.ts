import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.ts';

/** Stores a bundle under its sha256 unless that content is already stored (bundles are shared by content). */
export async function putBundle(trx: Transaction<Database>, bundle: { sha256: string; bytes: Buffer }): Promise<void> {
  await trx
    .insertInto('skill_bundles')
    .values({ sha256: bundle.sha256, bytes: bundle.bytes, size: bundle.bytes.length })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .execute();
}

/** The stored bytes of a bundle by its sha256. */
export async function getBundleBytes(db: Kysely<Database>, sha256: string): Promise<Buffer | undefined> {
  const row = await db.selectFrom('skill_bundles').select('bytes').where('sha256', '=', sha256).executeTakeFirst();
  // pg gives a Buffer, PGlite a Uint8Array.
  return row ? Buffer.from(row.bytes) : undefined;
}

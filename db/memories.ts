import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { whereOwner, type Owner } from './owner.ts';
import type { Database, MemoryRow, StoredVector } from './schema.ts';

/** A memory to store; `sourceKey` makes a retried writer's second write a no-op. */
export type NewMemoryInput = {
  owner: Owner;
  workspaceCode: string | null;
  content: string;
  tags?: string[];
  source: 'user' | 'tool' | 'mission';
  missionId?: string;
  sourceKey?: string;
  /** The memory's vector and the encoder that made it; none when no encoder answered. */
  embedding?: StoredVector | null;
};

/** The row a new memory is inserted as (a fresh id). */
export function newMemoryRow(m: NewMemoryInput) {
  return {
    id: randomUUID(),
    tenant_id: m.owner.tenantId,
    user_id: m.owner.userId,
    workspace_code: m.workspaceCode,
    content: m.content,
    tags: m.tags ?? [],
    source: m.source,
    mission_id: m.missionId ?? null,
    source_key: m.sourceKey ?? null,
    embedding: m.embedding?.vector ?? null,
    embedding_model: m.embedding?.model ?? null,
  };
}

/** Inserts a memory; with a `sourceKey` already stored, returns the stored row and writes nothing. */
export async function insertMemory(db: Kysely<Database>, m: NewMemoryInput): Promise<{ row: MemoryRow; created: boolean }> {
  const inserted = await db
    .insertInto('memories')
    .values(newMemoryRow(m))
    .onConflict((oc) => oc.column('source_key').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { row: inserted, created: true };
  const existing = await db
    .selectFrom('memories')
    .selectAll()
    .where('source_key', '=', m.sourceKey ?? '')
    .executeTakeFirstOrThrow();
  return { row: existing, created: false };
}

/** The owner's memories, newest first, optionally of one workspace, after an optional `seq` cursor. */
export async function listMemories(
  db: Kysely<Database>,
  owner: Owner,
  page: { limit: number; workspaceCode?: string; beforeSeq?: string },
): Promise<MemoryRow[]> {
  let q = db.selectFrom('memories').selectAll().where(whereOwner(owner));
  if (page.workspaceCode !== undefined) q = q.where('workspace_code', '=', page.workspaceCode);
  if (page.beforeSeq !== undefined) q = q.where('seq', '<', page.beforeSeq);
  return q.orderBy('seq', 'desc').limit(page.limit).execute();
}

/** Deletes the owner's memory; false when there is none of that id for this owner. */
export async function deleteOwnedMemory(db: Kysely<Database>, owner: Owner, id: string): Promise<boolean> {
  const res = await db.deleteFrom('memories').where('id', '=', id).where(whereOwner(owner)).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

/** The given memories of this owner, by id (order not kept). */
export async function getMemories(db: Kysely<Database>, owner: Owner, ids: string[]): Promise<MemoryRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('memories').selectAll().where('id', 'in', ids).where(whereOwner(owner)).execute();
}

/**
 * Memories whose vector is missing or was made by another encoder than `model` (another model, even of the same
 * width, or one stored before encoders were recorded), oldest first: what a re-embedding pass works through.
 */
export async function memoriesToEmbed(db: Kysely<Database>, model: string, limit: number): Promise<Array<{ id: string; content: string }>> {
  return db
    .selectFrom('memories')
    .select(['id', 'content'])
    .where((eb) => eb.or([eb('embedding', 'is', null), eb('embedding_model', 'is distinct from', model)]))
    .orderBy('seq', 'asc')
    .limit(limit)
    .execute();
}

/** The vector of the memory a writer keyed `sourceKey`, and the encoder recorded with it. */
export async function setMemoryEmbeddingByKey(db: Kysely<Database>, sourceKey: string, embedding: StoredVector): Promise<void> {
  await db
    .updateTable('memories')
    .set({ embedding: embedding.vector, embedding_model: embedding.model })
    .where('source_key', '=', sourceKey)
    .execute();
}

/** Replaces one memory's vector and the encoder recorded with it. */
export async function setMemoryEmbedding(db: Kysely<Database>, id: string, embedding: StoredVector): Promise<void> {
  await db.updateTable('memories').set({ embedding: embedding.vector, embedding_model: embedding.model }).where('id', '=', id).execute();
}

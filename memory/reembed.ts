import type { Kysely } from 'kysely';
import { anyMemory, memoriesToEmbed, setMemoryEmbedding } from '../db/memories.ts';
import type { Database } from '../db/schema.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from './embeddings-client.ts';

const BATCH = 32;

/**
 * Gives every memory a vector from `embeddings`: those stored without one and those another encoder made (a
 * different length, so their cosine with a query would be 0). Run once by each worker process at start, in the
 * background; a second process doing the same meanwhile only repeats work. Stops at the first failure (the next
 * start tries again) and when `signal` aborts. Returns how many memories it embedded.
 */
export async function reembedMemories(
  deps: { db: Kysely<Database>; embeddings: EmbeddingsClient; logger: Logger },
  signal: AbortSignal,
): Promise<number> {
  let done = 0;
  try {
    // Nothing stored, nothing to do: the encoder is not loaded for nothing.
    if (!(await anyMemory(deps.db))) return 0;
    const [probe] = await deps.embeddings.embed(['dimensions'], signal);
    const dims = probe?.length ?? 0;
    if (dims === 0) return 0;
    for (;;) {
      signal.throwIfAborted();
      const rows = await memoriesToEmbed(deps.db, dims, BATCH);
      if (rows.length === 0) break;
      const vectors = await deps.embeddings.embed(
        rows.map((r) => r.content),
        signal,
      );
      for (const [i, row] of rows.entries()) await setMemoryEmbedding(deps.db, row.id, vectors[i]!);
      done += rows.length;
    }
    if (done > 0) deps.logger.info('memories re-embedded for the current encoder', { memories: done, dims });
  } catch (err) {
    if (!signal.aborted) deps.logger.warn('re-embedding memories stopped; the next start goes on', { memories: done, err: String(err) });
  }
  return done;
}

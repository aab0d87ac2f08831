import type { NewChunk } from '../db/skill-versions.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';

/** The chunks with their vectors (and the encoder's name) when an encoder is configured; unchanged when none is, or it fails. */
export async function embedChunks(chunks: NewChunk[], embeddings: EmbeddingsClient | undefined, logger?: Logger): Promise<NewChunk[]> {
  if (!embeddings || chunks.length === 0) return chunks;
  try {
    const vectors = await embeddings.embed(chunks.map((c) => c.text));
    return chunks.map((c, i) => ({ ...c, embedding: vectors[i] && { model: embeddings.model, vector: vectors[i] } }));
  } catch (err) {
    // A skill is stored all the same; its chunks then match on keywords and trigrams only.
    logger?.warn('embeddings unavailable; skill chunks stored without them', { err });
    return chunks;
  }
}

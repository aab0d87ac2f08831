import { join } from 'node:path';
import type { Config } from '../config/config.ts';
import { createEmbeddingsClient, type EmbeddingsClient } from './embeddings-client.ts';
import { createLocalEmbeddings } from './local-embeddings.ts';
import { createSentenceEncoder } from './sentence-encoder.ts';

/** Where the local word vectors are cached under the data directory (converted once from the npm package). */
export const wordVectorCache = (dataDir: string) => join(dataDir, 'embeddings', 'wink-sg-100d-v2.bin');

/** Which encoder `buildEmbeddings` chose, for the start-up log and the benches. */
export type EmbeddingsKind = 'endpoint' | 'sentence-encoder' | 'word-vectors';

/**
 * The configured embeddings endpoint; else the local sentence encoder (all-MiniLM-L6-v2) when the setup installed it;
 * else the local word vectors, which ship inside an npm package and so are always there.
 */
export function buildEmbeddings(config: Pick<Config, 'embeddings' | 'dataDir' | 'sentenceEncoderDir' | 'localEncoder'>): {
  embeddings: EmbeddingsClient;
  kind: EmbeddingsKind;
} {
  if (config.embeddings) return { embeddings: createEmbeddingsClient(config.embeddings), kind: 'endpoint' };
  if (config.localEncoder === 'sentence-encoder')
    return { embeddings: createSentenceEncoder({ modelDir: config.sentenceEncoderDir }), kind: 'sentence-encoder' };
  return { embeddings: createLocalEmbeddings({ cacheFile: wordVectorCache(config.dataDir) }), kind: 'word-vectors' };
}

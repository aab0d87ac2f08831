import { join } from 'node:path';
import type { Config } from '../config/config.ts';
import { createEmbeddingsClient, type EmbeddingsClient } from './embeddings-client.ts';
import { createLocalEmbeddings } from './local-embeddings.ts';

/** Where the local word vectors are cached under the data directory (converted once from the npm package). */
export const wordVectorCache = (dataDir: string) => join(dataDir, 'embeddings', 'wink-sg-100d-v2.bin');

/** The configured embeddings endpoint, or the local word-vector encoder when none is set. */
export function buildEmbeddings(config: Pick<Config, 'embeddings' | 'dataDir'>): EmbeddingsClient {
  return config.embeddings
    ? createEmbeddingsClient(config.embeddings)
    : createLocalEmbeddings({ cacheFile: wordVectorCache(config.dataDir) });
}

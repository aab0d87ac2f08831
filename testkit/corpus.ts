import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The real-world skills corpus beside the repository (`../shared/corpus/skills/`; `CADENZA_CORPUS_DIR` moves it). */
export const CORPUS_DIR = process.env.CADENZA_CORPUS_DIR
  ? pathToFileURL(`${process.env.CADENZA_CORPUS_DIR.replace(/\/?$/, '/')}`)
  : new URL('../../shared/corpus/skills/', import.meta.url);

/** One corpus skill as its manifest lists it. */
export type CorpusEntry = { corpus_path: string; folder_name: string; name: string; name_matches_folder: boolean; description_len: number };

const present = () => existsSync(new URL('MANIFEST.json', CORPUS_DIR));

/**
 * The `skip` option of a corpus test: skipped, saying why, in a clone without the corpus; never skipped under
 * `CI=true`, where the corpus is part of the checkout, so a missing corpus fails the test instead of hiding it.
 */
export function corpusSkip(): string | false {
  if (present() || process.env.CI === 'true') return false;
  return `no corpus at ${fileURLToPath(CORPUS_DIR)} (under CI=true this test fails instead)`;
}

/** The corpus manifest; throws, naming the folder, when the corpus is missing. */
export function corpusManifest(): CorpusEntry[] {
  if (!present()) throw new Error(`the skills corpus is missing: no MANIFEST.json in ${fileURLToPath(CORPUS_DIR)}`);
  return JSON.parse(readFileSync(new URL('MANIFEST.json', CORPUS_DIR), 'utf8')) as CorpusEntry[];
}

import type { Kysely } from 'kysely';
import type { Owner } from '../db/owner.ts';
import type { Database } from '../db/schema.ts';
import { matchDiscoveryChunks, type ChunkPlace } from '../db/discovery-candidates.ts';
import { chunkKey, type ChunkMatch } from '../db/skill-discovery.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import type { VectorSearch } from '../memory/vector-search.ts';
import type { Logger } from '../lib/logger.ts';
import { standings, type DiscoveryTuning, type SkillStanding } from './discovery-score.ts';
import { namedSkills } from './explicit-names.ts';

/** A skill proposed for a message: named in it, or matched by its description and triggers. */
export type DiscoveredSkill = {
  id: string;
  name: string;
  description: string;
  version: number;
  score: number;
  reason: 'named' | 'matched';
  /** The chunk that gave most of the score: identity (name and description), a trigger, a description sentence, a body line. */
  matched: { kind: Exclude<ChunkMatch['kind'], 'not_for'>; text: string };
};

/** What discovery needs: its tuning, how vectors are searched and, when configured, an embeddings endpoint. */
export type DiscoveryDeps = {
  db: Kysely<Database>;
  tuning: DiscoveryTuning;
  embeddings?: EmbeddingsClient | undefined;
  vectors: VectorSearch;
  logger?: Logger;
};

/**
 * The chunks whose cosine with the message discovery takes: under pgvector the nearest ones only (a skill with none
 * among them scores on words alone), in process every chunk.
 */
const NEAREST_CHUNKS = 200;

/**
 * Ranks the owner's active skills for a message: skills named in it first (longest name first, always), then the
 * skills whose best match loads (see `standings`), best first. Suppressed skills are reported apart.
 */
export async function discoverSkills(deps: DiscoveryDeps, owner: Owner, message: string, limit = 5) {
  // A zero weight (the word vectors' default) leaves the message unembedded: the cosine would count for nothing.
  const { matches, messageEmbedding } = await matchMessage(deps, owner, message, deps.tuning.embeddingWeight !== 0);
  return proposeSkills(matches, message, deps.tuning, messageEmbedding, limit);
}

/**
 * The owner's active chunks discovery scores (`matchDiscoveryChunks`: every one of a small owner's) with their match
 * signals for the message and, when it is embedded (`embedMessage` and an encoder that answers), the cosine of the
 * nearest chunks `deps.vectors` found; and the message's vector.
 */
export async function matchMessage(
  deps: Omit<DiscoveryDeps, 'tuning'>,
  owner: Owner,
  message: string,
  embedMessage: boolean,
): Promise<{ matches: ChunkMatch[]; messageEmbedding: number[] | undefined }> {
  const messageEmbedding = embedMessage ? await embed(deps, message) : undefined;
  const cosines =
    messageEmbedding && deps.embeddings
      ? await deps.vectors.chunks(deps.db, owner, deps.embeddings.model, messageEmbedding, NEAREST_CHUNKS)
      : new Map<string, number>();
  // The nearest chunks are scored whatever their words (a large owner's lexical pass reads only chunks that can match).
  const nearest = [...cosines]
    .sort((a, b) => b[1] - a[1])
    .slice(0, NEAREST_CHUNKS)
    .map(([key]) => chunkPlace(key));
  const matches = await matchDiscoveryChunks(deps.db, owner, message, nearest);
  return {
    matches: matches.map((m) => {
      const c = cosines.get(chunkKey(m));
      return c === undefined ? m : { ...m, cosine: c };
    }),
    messageEmbedding,
  };
}

/** A `chunkKey` taken apart. */
function chunkPlace(key: string): ChunkPlace {
  const [ordinal, version, ...skillId] = key.split(':').reverse();
  return { skillId: skillId.reverse().join(':'), version: Number(version), ordinal: Number(ordinal) };
}

/** `discoverSkills` once the chunk matches and the message's embedding are in hand (pure: a bench sweeps it). */
export function proposeSkills(
  matches: ChunkMatch[],
  message: string,
  tuning: DiscoveryTuning,
  messageEmbedding: number[] | undefined,
  limit: number,
) {
  const ranked = standings(matches, tuning, messageEmbedding);
  const named = namedSkills(
    message,
    ranked.map((s) => s.name),
  );
  const byName = new Map(ranked.map((s) => [s.name, s]));
  const items: DiscoveredSkill[] = [
    ...named.map((name) => toItem(byName.get(name)!, 'named')),
    ...ranked.filter((s) => s.verdict === 'load' && !named.includes(s.name)).map((s) => toItem(s, 'matched')),
  ].slice(0, limit);
  const suppressed = ranked
    .filter((s) => s.verdict === 'suppressed' && !named.includes(s.name))
    .map((s) => ({ id: s.skillId, name: s.name, score: s.positive.score, notFor: s.negative! }));
  return { items, suppressed };
}

function toItem(s: SkillStanding, reason: DiscoveredSkill['reason']): DiscoveredSkill {
  return {
    id: s.skillId,
    name: s.name,
    description: s.description,
    version: s.version,
    score: s.positive.score,
    reason,
    matched: { kind: s.positive.kind, text: s.positive.text },
  };
}

export async function embed(deps: Pick<DiscoveryDeps, 'embeddings' | 'logger'>, message: string): Promise<number[] | undefined> {
  if (!deps.embeddings) return undefined;
  try {
    return (await deps.embeddings.embed([message]))[0];
  } catch (err) {
    // Discovery still works on keywords and trigrams when the embeddings endpoint fails.
    deps.logger?.warn('embeddings unavailable; discovery uses keywords and trigrams only', { err });
    return undefined;
  }
}

import type { ChunkMatch } from '../db/skill-discovery.ts';
import { cosine } from '../memory/embeddings-client.ts';

/**
 * Discovery settings (DISCOVERY_* configuration): the lowest score that loads a skill, the contrast margin, the share
 * of meaning (cosine) in a skill's score when embeddings are present, and the cosine below which it adds nothing.
 */
export type DiscoveryTuning = { minScore: number; margin: number; embeddingWeight?: number; minCosine?: number };

/** The cosine's share when no tuning says otherwise (the near-duplicate check; an embeddings endpoint). */
export const EMBEDDING_WEIGHT = 0.5;

/** A skill's standing for a message: its best positive and best not_for evidence, and the verdict. */
export type SkillStanding = {
  skillId: string;
  name: string;
  description: string;
  version: number;
  positive: { score: number; kind: Exclude<ChunkMatch['kind'], 'not_for'>; text: string };
  negative: { score: number; text: string } | undefined;
  verdict: 'load' | 'suppressed' | 'below';
};

/** A chunk's lexical score in [0, 1]: the mean of the normalised full-text rank and the trigram similarity. */
export const lexicalScore = (chunk: Pick<ChunkMatch, 'rank' | 'trigram'>) => 0.5 * (chunk.rank / (chunk.rank + 1)) + 0.5 * chunk.trigram;

/** A cosine in [0, 1]: what lies below `minCosine` counts for nothing, the rest is stretched to fill the range. */
const semantic = (c: number, minCosine: number) => Math.max(0, (c - minCosine) / (1 - minCosine));

/**
 * One chunk's score in [0, 1]: lexical, mixed with the cosine (`embeddingWeight` of it) when both sides have
 * embeddings. Used where one chunk is compared with one text (the near-duplicate check).
 */
export function chunkScore(
  chunk: Pick<ChunkMatch, 'rank' | 'trigram' | 'embedding'>,
  messageEmbedding?: number[],
  embeddingWeight = EMBEDDING_WEIGHT,
  minCosine = 0,
): number {
  const lexical = lexicalScore(chunk);
  if (!messageEmbedding || !chunk.embedding || embeddingWeight === 0) return lexical;
  return (1 - embeddingWeight) * lexical + embeddingWeight * semantic(cosine(chunk.embedding, messageEmbedding), minCosine);
}

/** The best chunk of a side (positive or not_for) by words and by meaning, each with its text. */
type Evidence = { lexical: number; lexicalAt?: ChunkMatch; cosine: number; cosineAt?: ChunkMatch };

/**
 * A skill's score for one side: `(1 - w)·best lexical + w·best cosine`, each best taken over its own chunks. Words
 * count only where the author wrote them to be matched (identity, triggers, not_for: a long body shares some word with
 * almost any ask); meaning counts over every chunk, the description's sentences and the body's lines included, so an
 * ask that shares no word with the description can still find the skill. Without a message embedding: lexical alone.
 */
function sideScore(e: Evidence, tuning: DiscoveryTuning, semanticOn: boolean) {
  const w = semanticOn ? (tuning.embeddingWeight ?? EMBEDDING_WEIGHT) : 0;
  const meaning = semantic(e.cosine, tuning.minCosine ?? 0);
  const score = (1 - w) * e.lexical + w * meaning;
  // The chunk reported as the match is the one that gave the larger share of the score.
  const at = w * meaning > (1 - w) * e.lexical ? e.cosineAt : (e.lexicalAt ?? e.cosineAt);
  return { score, at };
}

/**
 * Groups chunk matches by skill: identity, trigger, description and body chunks score for it, not_for chunks against
 * it; a chunk's meaning is its `cosine` with the message, where discovery measured one. A skill loads when its positive score reaches `minScore` and its not_for score stays more than `margin` below.
 */
export function standings(matches: ChunkMatch[], tuning: DiscoveryTuning, messageEmbedding?: number[]): SkillStanding[] {
  const semanticOn = messageEmbedding !== undefined && (tuning.embeddingWeight ?? EMBEDDING_WEIGHT) > 0;
  const bySkill = new Map<string, { first: ChunkMatch; pos: Evidence; neg?: Evidence }>();
  for (const m of matches) {
    const s = bySkill.get(m.skillId) ?? { first: m, pos: { lexical: 0, cosine: 0 } };
    const side = m.kind === 'not_for' ? (s.neg ??= { lexical: 0, cosine: 0 }) : s.pos;
    if ((m.kind === 'identity' || m.kind === 'trigger' || m.kind === 'not_for') && (!side.lexicalAt || lexicalScore(m) > side.lexical))
      Object.assign(side, { lexical: lexicalScore(m), lexicalAt: m });
    if (semanticOn && m.cosine !== undefined) {
      const c = m.cosine;
      if (!side.cosineAt || c > side.cosine) Object.assign(side, { cosine: c, cosineAt: m });
    }
    bySkill.set(m.skillId, s);
  }
  const out: SkillStanding[] = [];
  for (const { first, pos, neg } of bySkill.values()) {
    const p = sideScore(pos, tuning, semanticOn);
    const n = neg && sideScore(neg, tuning, semanticOn);
    const verdict = p.score < tuning.minScore ? 'below' : n && n.score >= p.score - tuning.margin ? 'suppressed' : ('load' as const);
    out.push({
      skillId: first.skillId,
      name: first.name,
      description: first.description,
      version: first.version,
      positive: { score: p.score, kind: p.at && p.at.kind !== 'not_for' ? p.at.kind : 'identity', text: p.at?.text ?? '' },
      negative: n && { score: n.score, text: n.at?.text ?? '' },
      verdict,
    });
  }
  return out.sort((a, b) => b.positive.score - a.positive.score || a.name.localeCompare(b.name));
}

import type { ChunkMatch } from '../db/skill-discovery.ts';
import { cosine } from '../memory/embeddings-client.ts';

/**
 * Discovery settings (DISCOVERY_* configuration): the lowest score that loads a skill, the contrast margin, the share
 * of the cosine in a chunk's score when embeddings are present, and the cosine below which it adds nothing (a bench
 * sweeps it; 0 by default).
 */
export type DiscoveryTuning = { minScore: number; margin: number; embeddingWeight?: number; minCosine?: number };

/** The cosine's share when no tuning says otherwise (the near-duplicate check; an embeddings endpoint). */
export const EMBEDDING_WEIGHT = 0.5;

/** A skill's standing for a message: its best positive and best not_for chunk, and the verdict. */
export type SkillStanding = {
  skillId: string;
  name: string;
  description: string;
  version: number;
  positive: { score: number; kind: 'identity' | 'trigger'; text: string };
  negative: { score: number; text: string } | undefined;
  verdict: 'load' | 'suppressed' | 'below';
};

/**
 * One chunk's score in [0, 1]: the mean of the normalised full-text rank and the trigram similarity, and, when both
 * sides have embeddings, that mixed with the cosine similarity (`embeddingWeight` of it). The weights were chosen
 * on the tuning asks of test/fixtures/discovery (see `npm run bench:discovery`).
 */
export function chunkScore(
  chunk: Pick<ChunkMatch, 'rank' | 'trigram' | 'embedding'>,
  messageEmbedding?: number[],
  embeddingWeight = EMBEDDING_WEIGHT,
  minCosine = 0,
): number {
  const lexical = 0.5 * (chunk.rank / (chunk.rank + 1)) + 0.5 * chunk.trigram;
  if (!messageEmbedding || !chunk.embedding || embeddingWeight === 0) return lexical;
  const semantic = Math.max(0, (cosine(chunk.embedding, messageEmbedding) - minCosine) / (1 - minCosine));
  return (1 - embeddingWeight) * lexical + embeddingWeight * semantic;
}

/**
 * Groups chunk matches by skill: identity and trigger chunks score for it, not_for chunks against it. A skill loads
 * when its best positive score reaches `minScore` and its best not_for score stays more than `margin` below it.
 */
export function standings(matches: ChunkMatch[], tuning: DiscoveryTuning, messageEmbedding?: number[]): SkillStanding[] {
  const bySkill = new Map<string, SkillStanding>();
  for (const m of matches) {
    const score = chunkScore(m, messageEmbedding, tuning.embeddingWeight, tuning.minCosine);
    const s = bySkill.get(m.skillId) ?? {
      skillId: m.skillId,
      name: m.name,
      description: m.description,
      version: m.version,
      positive: { score: 0, kind: 'identity' as const, text: '' },
      negative: undefined,
      verdict: 'below' as const,
    };
    if (m.kind === 'not_for') {
      if (!s.negative || score > s.negative.score) s.negative = { score, text: m.text };
    } else if (score > s.positive.score || s.positive.text === '') {
      s.positive = { score, kind: m.kind, text: m.text };
    }
    bySkill.set(m.skillId, s);
  }
  for (const s of bySkill.values()) {
    if (s.positive.score < tuning.minScore) s.verdict = 'below';
    else if (s.negative && s.negative.score >= s.positive.score - tuning.margin) s.verdict = 'suppressed';
    else s.verdict = 'load';
  }
  return [...bySkill.values()].sort((a, b) => b.positive.score - a.positive.score || a.name.localeCompare(b.name));
}

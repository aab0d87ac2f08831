import type { ChunkMatch } from '../db/skill-discovery.ts';
import { cosine } from '../memory/embeddings-client.ts';

/** Discovery settings: the lowest score that loads a skill and the contrast margin (DISCOVERY_* configuration). */
export type DiscoveryTuning = { minScore: number; margin: number };

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
 * sides have embeddings, the mean of that and the cosine similarity. The weights were chosen on the labelled set in
 * test/fixtures/discovery (see `npm run bench:discovery`).
 */
export function chunkScore(chunk: Pick<ChunkMatch, 'rank' | 'trigram' | 'embedding'>, messageEmbedding?: number[]): number {
  const lexical = 0.5 * (chunk.rank / (chunk.rank + 1)) + 0.5 * chunk.trigram;
  if (!messageEmbedding || !chunk.embedding) return lexical;
  return 0.5 * lexical + 0.5 * Math.max(0, cosine(chunk.embedding, messageEmbedding));
}

/**
 * Groups chunk matches by skill: identity and trigger chunks score for it, not_for chunks against it. A skill loads
 * when its best positive score reaches `minScore` and its best not_for score stays more than `margin` below it.
 */
export function standings(matches: ChunkMatch[], tuning: DiscoveryTuning, messageEmbedding?: number[]): SkillStanding[] {
  const bySkill = new Map<string, SkillStanding>();
  for (const m of matches) {
    const score = chunkScore(m, messageEmbedding);
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

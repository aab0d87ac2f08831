import type { SkillSpec } from '../contracts/skill-spec.ts';
import type { NewChunk } from '../db/skill-versions.ts';
import { bodyLines, descriptionSentences } from './skill-text-chunks.ts';

/**
 * The discovery chunks of a skill: its identity (name + description), each trigger, each not_for ask, then each
 * sentence of the description and each line of the body (matched by meaning: they need an encoder).
 */
export function discoveryChunks(skill: {
  name: string;
  description: string;
  body?: string;
  spec: Pick<SkillSpec, 'triggers' | 'notFor'>;
}): NewChunk[] {
  return [
    // The name with spaces reads as words to the full-text parser (`hazardous plume`), not as one hyphenated token.
    { kind: 'identity', text: `${skill.name.replace(/-/g, ' ')}: ${skill.description}` },
    ...skill.spec.triggers.map((text) => ({ kind: 'trigger' as const, text })),
    ...skill.spec.notFor.map((text) => ({ kind: 'not_for' as const, text })),
    ...descriptionSentences(skill.description).map((text) => ({ kind: 'description' as const, text })),
    ...bodyLines(skill.body ?? '').map((text) => ({ kind: 'body' as const, text })),
  ];
}

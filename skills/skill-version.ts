import { createHash } from 'node:crypto';
import type { NewVersion } from '../db/skill-versions.ts';
import { buildBundle } from './bundle.ts';
import { discoveryChunks } from './discovery-chunks.ts';
import type { SkillFieldError } from './frontmatter.ts';
import type { ParsedSkill } from './skill-md.ts';
import type { ZipFile } from './zip-reader.ts';

/**
 * What a version stores, from its SKILL.md text, the parsed skill and the folder's other files (none for a bare
 * SKILL.md): the bundle is built here, so the stored SKILL.md and the bundle's copy are the same bytes.
 */
export function newVersion(skillMd: string, skill: ParsedSkill, otherFiles: ZipFile[] = [], warnings: SkillFieldError[] = []): NewVersion {
  const files = [{ path: 'SKILL.md', data: Buffer.from(skillMd, 'utf8') }, ...otherFiles.filter((f) => f.path !== 'SKILL.md')];
  return {
    skillMd,
    sha256: createHash('sha256').update(skillMd).digest('hex'),
    name: skill.name,
    description: skill.description,
    frontmatter: skill.frontmatter,
    spec: skill.spec,
    body: skill.body,
    bundle: buildBundle(skill.name, files),
    warnings,
    chunks: discoveryChunks(skill),
  };
}

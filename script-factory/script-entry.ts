import { parseDocument, stringify } from 'yaml';
import type { SkillScript } from '../contracts/skill-spec.ts';
import { readYamlValue } from '../skills/frontmatter.ts';

const FRONTMATTER = /^(\uFEFF?---[ \t]*\r?\n)([\s\S]*?)(^---[ \t]*(?:\r?\n|$))/m;

/**
 * The SKILL.md with one more declared script: appended to `metadata.cadenza-scripts` (or to a top-level `scripts`
 * list, the older form, when the skill uses it). Only that entry changes: the rest of the frontmatter keeps its
 * comments and order, and the body its bytes. A string says why it cannot.
 */
export function withScriptEntry(skillMd: string, entry: SkillScript): { ok: true; skillMd: string } | { ok: false; error: string } {
  const found = FRONTMATTER.exec(skillMd);
  if (!found || found.index !== 0) return { ok: false, error: "the skill's SKILL.md has no frontmatter to declare the script in" };
  const doc = parseDocument(found[2]!);
  if (doc.errors.length > 0) return { ok: false, error: `the skill's frontmatter is not valid YAML: ${doc.errors[0]!.message}` };
  const clean = Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== undefined));
  if (doc.has('scripts')) {
    doc.addIn(['scripts'], doc.createNode(clean));
  } else {
    const current = doc.getIn(['metadata', 'cadenza-scripts']);
    const list = typeof current === 'string' ? readYamlValue(current) : { ok: true as const, value: current ?? [] };
    if (!list.ok || !Array.isArray(list.value)) return { ok: false, error: 'metadata.cadenza-scripts does not hold a YAML list' };
    doc.setIn(['metadata', 'cadenza-scripts'], stringify([...list.value, clean]));
  }
  const rest = skillMd.slice(found[0].length);
  return { ok: true, skillMd: `${found[1]}${doc.toString()}${found[3]!.trimEnd()}\n${rest}` };
}

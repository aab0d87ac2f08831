import { parseDocument, visit } from 'yaml';

/** A SKILL.md problem (or, for imports, a warning); `field` is the frontmatter key as written, or `frontmatter` / `body`. */
export type SkillFieldError = { field: string; message: string };

/** A SKILL.md cut into its YAML frontmatter and its Markdown body. */
export type SplitSkillMd = {
  /** The YAML between the `---` lines; undefined when there is none or it is not closed. */
  yaml: string | undefined;
  /** The procedure, leading blank lines and trailing whitespace removed; undefined when an unclosed frontmatter hides it. */
  body: string | undefined;
  errors: SkillFieldError[];
};

/** Cuts a SKILL.md at its `---` lines (a byte-order mark and CRLF line ends are accepted). */
export function splitSkillMd(text: string): SplitSkillMd {
  const lines = text
    .replace(/^\uFEFF/, '')
    .replace(/\r\n?/g, '\n')
    .split('\n');
  const body = (from: string[]) =>
    from
      .join('\n')
      .replace(/^\s*\n/, '')
      .trimEnd();
  if (lines[0]?.trimEnd() !== '---') {
    return {
      yaml: undefined,
      body: body(lines),
      errors: [{ field: 'frontmatter', message: "missing: SKILL.md must begin with YAML frontmatter between '---' lines" }],
    };
  }
  const end = lines.findIndex((line, i) => i > 0 && line.trimEnd() === '---');
  if (end < 0)
    return {
      yaml: undefined,
      body: undefined,
      errors: [{ field: 'frontmatter', message: "not closed: add a '---' line after the frontmatter" }],
    };
  return { yaml: lines.slice(1, end).join('\n'), body: body(lines.slice(end + 1)), errors: [] };
}

/** The frontmatter as a mapping, or why it is not one; YAML line numbers count from the top of the file. */
export function readYaml(yaml: string): Record<string, unknown> | string {
  const doc = parseDocument(yaml);
  const error = doc.errors[0];
  if (error) {
    const reason = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '');
    // +1 for the opening '---' line.
    const line = (error.linePos?.[0].line ?? 0) + 1;
    return `invalid YAML at line ${line}: ${reason}`;
  }
  // A SKILL.md needs no anchors and aliases (the reference validator's YAML refuses them too); refusing them up front
  // also disarms alias bombs, which would otherwise expand or throw while the document is converted.
  let alias: { source: string; line: number } | undefined;
  visit(doc, {
    Alias(_key, node) {
      alias = { source: node.source, line: lineOf(yaml, node.range?.[0] ?? 0) };
      return visit.BREAK;
    },
  });
  if (alias) return `YAML aliases are not allowed (*${alias.source} at line ${alias.line}): write the value out`;
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (err) {
    return `invalid YAML: ${(err as Error).message}`;
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return 'must be a YAML mapping of fields';
  return value as Record<string, unknown>;
}

// +1 for the opening '---' line, +1 because lines count from 1.
const lineOf = (yaml: string, offset: number) => yaml.slice(0, offset).split('\n').length + 1;

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
  const read = readYamlValue(yaml, 1);
  if (!read.ok) return read.message;
  if (read.value === null || read.value === undefined) return {};
  if (typeof read.value !== 'object' || Array.isArray(read.value)) return 'must be a YAML mapping of fields';
  return read.value as Record<string, unknown>;
}

/** A YAML text's value, or why it has none; `lineOffset` lines precede the text in its file (`---` for frontmatter). */
export function readYamlValue(yaml: string, lineOffset = 0): { ok: true; value: unknown } | { ok: false; message: string } {
  const doc = parseDocument(yaml);
  const error = doc.errors[0];
  if (error) {
    const reason = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '');
    const line = (error.linePos?.[0].line ?? 0) + lineOffset;
    return { ok: false, message: `invalid YAML at line ${line}: ${reason}` };
  }
  // A SKILL.md needs no anchors and aliases (the reference validator's YAML refuses them too); refusing them up front
  // also disarms alias bombs, which would otherwise expand or throw while the document is converted.
  let alias: { source: string; line: number } | undefined;
  visit(doc, {
    Alias(_key, node) {
      alias = { source: node.source, line: yaml.slice(0, node.range?.[0] ?? 0).split('\n').length + lineOffset };
      return visit.BREAK;
    },
  });
  if (alias) return { ok: false, message: `YAML aliases are not allowed (*${alias.source} at line ${alias.line}): write the value out` };
  try {
    return { ok: true, value: doc.toJS() };
  } catch (err) {
    return { ok: false, message: `invalid YAML: ${(err as Error).message}` };
  }
}

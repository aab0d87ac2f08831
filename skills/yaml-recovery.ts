/**
 * Quotes plain scalars holding an unquoted `: ` (`description: Use when: the user asks`), the invalid YAML other tools
 * commonly write; returns the rewritten YAML and the keys it quoted (none when nothing needed quoting).
 */
export function quoteColonScalars(yaml: string): { yaml: string; keys: string[] } {
  const keys: string[] = [];
  // Lines of a block scalar (`key: |`) are text, never rewritten: the indent below which the block ends.
  let blockIndent: number | undefined;
  const lines = yaml.split('\n').map((line) => {
    const indent = line.length - line.trimStart().length;
    if (blockIndent !== undefined && (line.trim() === '' || indent > blockIndent)) return line;
    blockIndent = /:[ \t]*[|>][-+0-9]*[ \t]*(#.*)?$/.test(line) ? indent : undefined;
    const m = /^(\s*(?:- +)?)([\w.-]+):[ \t]+(.+)$/.exec(line);
    if (!m) return line;
    const [, lead, key, rest] = m as unknown as [string, string, string, string];
    // Quoted, flow, block, anchored or tagged values are YAML constructs, not plain scalars: leave them be.
    if (/^["'[{|>&*!%@`#]/.test(rest)) return line;
    const hash = rest.search(/\s#/);
    const value = (hash >= 0 ? rest.slice(0, hash) : rest).trimEnd();
    const comment = hash >= 0 ? rest.slice(hash) : '';
    if (!/:(\s|$)/.test(value)) return line;
    keys.push(key);
    // A JSON string is a valid YAML double-quoted scalar with the same value.
    return `${lead}${key}: ${JSON.stringify(value)}${comment}`;
  });
  return { yaml: lines.join('\n'), keys };
}

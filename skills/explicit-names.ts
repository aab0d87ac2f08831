/**
 * The skill names a message mentions, longest first: `hazardous-plume` matches "hazardous-plume" and "Hazardous
 * Plume" on word boundaries, in any case. A name inside a longer one already matched does not count again.
 */
export function namedSkills(message: string, names: readonly string[]): string[] {
  let rest = message;
  const found: string[] = [];
  for (const name of [...new Set(names)].sort((a, b) => b.length - a.length || a.localeCompare(b))) {
    const words = name.split('-').map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${words.join('[-\\s]+')}(?![\\p{L}\\p{N}])`, 'iu');
    const match = pattern.exec(rest);
    if (!match) continue;
    found.push(name);
    rest = rest.slice(0, match.index) + ' '.repeat(match[0].length) + rest.slice(match.index + match[0].length);
  }
  return found;
}

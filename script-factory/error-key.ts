/**
 * An attempt's error as the factory compares it with the previous one: what changes from run to run without the
 * mistake changing (line and column numbers, memory addresses, temporary paths, durations, ids) is stripped, so
 * "the same error twice" means the model did not fix anything.
 */
export function errorKey(error: string): string {
  return error
    .replace(/\/tmp\/[^\s"':)]+/g, '<tmp>')
    .replace(/\b0x[0-9a-f]+\b/gi, '<addr>')
    .replace(/\bline \d+/gi, 'line <n>')
    .replace(/:\d+(?::\d+)?\b/g, ':<n>')
    .replace(/"durationMs":\s*\d+/g, '"durationMs":<n>')
    .replace(/\b\d+(?:\.\d+)?\s*(?:ms|s)\b/g, '<time>')
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<id>')
    .replace(/\s+/g, ' ')
    .trim();
}

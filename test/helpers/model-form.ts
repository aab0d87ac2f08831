import { decode } from '@toon-format/toon';

/** A tool result as the model read it, parsed back: compact JSON or TOON (whichever was sent), notes after it left out. */
export function parseToolResult(content: string): unknown {
  const body = content.split('\n\n[')[0]!;
  try {
    return JSON.parse(body);
  } catch {
    return decode(body);
  }
}

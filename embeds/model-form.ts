import { DELIMITERS, encode } from '@toon-format/toon';
import { countTokens } from 'gpt-tokenizer';
import { TOOL_RESULT_MAX_TOKENS } from '../contracts/embeds.ts';
import { RESULT_KEYS, splitToolResult } from './tool-result.ts';

/** What the model is shown of one value: TOON when it takes fewer tokens than compact JSON, else compact JSON. */
export type ModelForm = { text: string; format: 'toon' | 'json' | 'text'; tokens: number; truncated: boolean };

type Path = Array<string | number>;

/**
 * The cheapest form of `value` for the model, counted in tokens (o200k, the tokenizer of current OpenAI models; other
 * providers' counts differ a little, not the ranking). Over `maxTokens`, the largest list is cut to the items that
 * fit (or the longest text to its words that fit), again until it fits, and a note says what was left out.
 */
export function renderForModel(value: unknown, maxTokens = TOOL_RESULT_MAX_TOKENS): ModelForm {
  if (typeof value === 'string') return renderText(value, maxTokens);
  const whole = cheapest(value);
  if (whole.tokens <= maxTokens) return whole;
  const notes: string[] = [];
  // Room for the note itself, so the cut result plus its note stays within the budget.
  const budget = Math.max(1, maxTokens - 60);
  let current = value;
  for (let round = 0; round < 8; round++) {
    const target = largestPart(current);
    if (!target) break;
    const { path, node } = target;
    const size = Array.isArray(node) ? node.length : (node as string).length;
    const cutTo = (n: number) => setAt(current, path, Array.isArray(node) ? node.slice(0, n) : cutWords(node as string, n));
    // The longest prefix that fits: binary search over the item (or character) count.
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (cheapest(cutTo(mid)).tokens <= budget) lo = mid;
      else hi = mid - 1;
    }
    current = cutTo(lo);
    const where = path.length ? path.join('.') : 'the result';
    notes.push(Array.isArray(node) ? `${where}: ${lo} of ${size} items shown` : `${where}: cut after ${lo} of ${size} characters`);
    if (cheapest(current).tokens <= budget) break;
  }
  const form = cheapest(current);
  const text = `${form.text}\n[truncated to fit ${maxTokens} tokens on a value boundary; ${notes.join('; ') || 'nothing could be cut'}]`;
  return { text, format: form.format, tokens: countTokens(text), truncated: true };
}

/** The smaller of compact JSON and TOON (comma or tab rows), ties to JSON. */
export function cheapest(value: unknown): ModelForm {
  const json = JSON.stringify(value) ?? 'null';
  const jsonTokens = countTokens(json);
  let best: ModelForm = { text: json, format: 'json', tokens: jsonTokens, truncated: false };
  if (typeof value !== 'object' || value === null) return best;
  for (const delimiter of [DELIMITERS.comma, DELIMITERS.tab]) {
    const toon = encode(value, { delimiter });
    const tokens = countTokens(toon);
    if (tokens < best.tokens) best = { text: toon, format: 'toon', tokens, truncated: false };
  }
  return best;
}

function renderText(text: string, maxTokens: number): ModelForm {
  const tokens = countTokens(text);
  if (tokens <= maxTokens) return { text, format: 'text', tokens, truncated: false };
  const lines = text.split('\n');
  const budget = maxTokens - 40;
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (countTokens(lines.slice(0, mid).join('\n')) <= budget) lo = mid;
    else hi = mid - 1;
  }
  // One enormous line: cut on a word boundary instead.
  const kept = lo > 0 ? lines.slice(0, lo).join('\n') : cutWords(text, Math.floor(budget * 3));
  const note = lo > 0 ? `${lo} of ${lines.length} lines shown` : `cut after ${kept.length} of ${text.length} characters`;
  const out = `${kept}\n[truncated to fit ${maxTokens} tokens; ${note}]`;
  return { text: out, format: 'text', tokens: countTokens(out), truncated: true };
}

/** The list with the most items' worth of text, or the longest string, whichever is bigger: what cutting saves most. */
function largestPart(value: unknown): { path: Path; node: unknown[] | string } | undefined {
  let best: { path: Path; node: unknown[] | string; size: number } | undefined;
  const visit = (node: unknown, path: Path) => {
    if (Array.isArray(node)) {
      const size = JSON.stringify(node).length;
      if (node.length > 1 && (!best || size > best.size)) best = { path, node, size };
      node.forEach((item, i) => visit(item, [...path, i]));
    } else if (typeof node === 'object' && node !== null) {
      for (const [k, v] of Object.entries(node)) visit(v, [...path, k]);
    } else if (typeof node === 'string' && node.length > 200 && (!best || node.length > best.size)) {
      best = { path, node, size: node.length };
    }
  };
  visit(value, []);
  return best && { path: best.path, node: best.node };
}

function setAt(value: unknown, path: Path, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? setAt(v, rest, replacement) : v));
  const obj = value as Record<string, unknown>;
  return { ...obj, [head!]: setAt(obj[head!], rest, replacement) };
}

/** The text cut to at most `chars` characters, at the last word boundary, marked with an ellipsis. */
function cutWords(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const cut = text.slice(0, chars);
  const space = cut.lastIndexOf(' ');
  return `${space > chars / 2 ? cut.slice(0, space) : cut}…`;
}

/**
 * A tool's result as the model reads it: the result without the parts meant for the caller (canvases, follow-ups) in
 * its cheapest form, then the tool's added instructions and the titles of the canvases the user was shown.
 */
export function toolResultForModel(raw: unknown, maxTokens = TOOL_RESULT_MAX_TOKENS): ModelForm {
  const parts = splitToolResult(raw);
  const shown =
    typeof raw === 'object' && raw !== null && !Array.isArray(raw)
      ? Object.fromEntries(
          Object.entries(raw).filter(([k]) => k !== RESULT_KEYS.canvas && k !== RESULT_KEYS.followUps && k !== RESULT_KEYS.instructions),
        )
      : raw;
  const form = renderForModel(shown, maxTokens);
  const extra = [
    ...(parts.canvases.length ? [`[shown to the user as canvases: ${parts.canvases.map((c) => JSON.stringify(c.title)).join(', ')}]`] : []),
    ...(parts.instructions ? [`[instructions from the tool: ${parts.instructions}]`] : []),
  ];
  return extra.length ? { ...form, text: `${form.text}\n\n${extra.join('\n')}` } : form;
}

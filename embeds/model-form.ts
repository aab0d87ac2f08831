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
  // A value far over the budget is first cut by characters (cheap), then by tokens: counting is the slow part.
  const charBudget = maxTokens * CHARS_PER_TOKEN_CEILING;
  const whole = (JSON.stringify(value) ?? '').length > charBudget ? undefined : cheapest(value);
  if (whole && whole.tokens <= maxTokens) return whole;
  const notes = new Map<string, string>();
  let current = whole ? value : shrink(value, (v) => (JSON.stringify(v) ?? '').length <= charBudget, notes);
  // Room for the note itself, so the cut result plus its note stays within the budget.
  const budget = Math.max(1, maxTokens - 60);
  if (cheapest(current).tokens > budget) current = shrink(current, (v) => cheapest(v).tokens <= budget, notes);
  const form = cheapest(current);
  const text = `${form.text}\n[truncated to fit ${maxTokens} tokens on a value boundary; ${[...notes.values()].join('; ') || 'nothing could be cut'}]`;
  return { text, format: form.format, tokens: tokensOf(text), truncated: true };
}

/** No JSON-like text takes more characters per o200k token than this (a long run of one letter takes 8). */
const CHARS_PER_TOKEN_CEILING = 8;
// The original size of each part cut so far, per truncation (keyed by its notes).
const sizes = new WeakMap<Map<string, string>, Map<string, number>>();

/**
 * Cuts the part whose cut saves most — the largest list to the items that fit, or the longest text to its words —
 * by a binary search on the count, again until `fits`; `notes` says, per part, how much is left (the last cut wins).
 */
function shrink(value: unknown, fits: (v: unknown) => boolean, notes: Map<string, string>): unknown {
  const originals = sizes.get(notes) ?? new Map<string, number>();
  sizes.set(notes, originals);
  let current = value;
  for (let round = 0; round < 8 && !fits(current); round++) {
    const target = largestPart(current);
    if (!target) break;
    const { path, node } = target;
    const where = path.length ? path.join('.') : 'the result';
    const size = Array.isArray(node) ? node.length : (node as string).length;
    // A part cut by characters first and by tokens next is reported against its original size.
    const was = originals.get(where) ?? size;
    originals.set(where, was);
    const cutTo = (n: number) => setAt(current, path, Array.isArray(node) ? node.slice(0, n) : cutWords(node as string, n));
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fits(cutTo(mid))) lo = mid;
      else hi = mid - 1;
    }
    current = cutTo(lo);
    notes.set(where, Array.isArray(node) ? `${where}: ${lo} of ${was} items shown` : `${where}: cut after ${lo} of ${was} characters`);
  }
  return current;
}

/**
 * Tokens of a text; a long one counted in pieces that end before a space or line break (where o200k's
 * pre-tokenizer mostly splits anyway, so the sum is within a few tokens): one long run without spaces costs the BPE
 * quadratic time.
 */
export function tokensOf(text: string): number {
  // Exact below this size (the pieces' sum can differ by a token where a cut falls inside a quoted value).
  if (text.length <= 16_000) return countTokens(text);
  const PIECE = 1_000;
  let total = 0;
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + PIECE);
    if (end < text.length) {
      const window = text.slice(at, end);
      const cut = Math.max(window.lastIndexOf(' '), window.lastIndexOf('\n'));
      if (cut > PIECE / 2) end = at + cut;
    }
    total += countTokens(text.slice(at, end));
    at = end;
  }
  return total;
}

/** The smaller of compact JSON and TOON (comma or tab rows), ties to JSON. */
export function cheapest(value: unknown): ModelForm {
  const json = JSON.stringify(value) ?? 'null';
  const jsonTokens = tokensOf(json);
  let best: ModelForm = { text: json, format: 'json', tokens: jsonTokens, truncated: false };
  if (typeof value !== 'object' || value === null) return best;
  for (const delimiter of [DELIMITERS.comma, DELIMITERS.tab]) {
    const toon = encode(value, { delimiter });
    const tokens = tokensOf(toon);
    if (tokens < best.tokens) best = { text: toon, format: 'toon', tokens, truncated: false };
  }
  return best;
}

function renderText(text: string, maxTokens: number): ModelForm {
  const ceiling = maxTokens * CHARS_PER_TOKEN_CEILING;
  if (text.length <= ceiling) {
    const tokens = tokensOf(text);
    if (tokens <= maxTokens) return { text, format: 'text', tokens, truncated: false };
  }
  const all = text.split('\n');
  // Beyond the character ceiling nothing can fit: only the lines within it are candidates.
  let lines = all;
  if (text.length > ceiling) {
    const head = text.slice(0, ceiling).split('\n');
    lines = head.length > 1 ? head.slice(0, -1) : head;
  }
  const budget = maxTokens - 40;
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (tokensOf(lines.slice(0, mid).join('\n')) <= budget) lo = mid;
    else hi = mid - 1;
  }
  // One enormous line: cut on a word boundary instead.
  const kept = lo > 0 ? lines.slice(0, lo).join('\n') : cutWords(text, Math.floor(budget * 3));
  const note = lo > 0 ? `${lo} of ${all.length} lines shown` : `cut after ${kept.length} of ${text.length} characters`;
  const out = `${kept}\n[truncated to fit ${maxTokens} tokens; ${note}]`;
  return { text: out, format: 'text', tokens: tokensOf(out), truncated: true };
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

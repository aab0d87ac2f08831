import { DELIMITERS, encode } from '@toon-format/toon';
import { countTokens } from 'gpt-tokenizer';
import { TOOL_RESULT_MAX_TOKENS } from '../contracts/embeds.ts';
import { cutToFit, cutWords, describeCuts, type Cuts } from './cut.ts';
import { RESULT_KEYS, splitToolResult } from './tool-result.ts';

/** What the model is shown of one value: TOON when it takes fewer tokens than compact JSON, else compact JSON. */
export type ModelForm = { text: string; format: 'toon' | 'json' | 'text'; tokens: number; truncated: boolean };

/**
 * The cheapest form of `value` for the model, counted in tokens (o200k, the tokenizer of current OpenAI models; other
 * providers' counts differ a little, not the ranking). Over `maxTokens`, the part holding the bulk is cut — a list to
 * its first items, a map to its first entries, a text to its first words — again until the text sent, note
 * included, counts within `maxTokens`; the note says what was cut.
 */
export function renderForModel(value: unknown, maxTokens = TOOL_RESULT_MAX_TOKENS): ModelForm {
  // The cut's probes count texts that share all but their ends: each piece is counted once per render.
  const tokensOf = memoTokens();
  const cheapest = (v: unknown): ModelForm => {
    const { render: _, ...form } = cheapestForm(v, tokensOf);
    return form;
  };
  if (typeof value === 'string') return renderText(value, maxTokens, tokensOf);
  // A value far over the budget is first cut by characters (cheap), then by tokens: counting is the slow part.
  const charBudget = maxTokens * CHARS_PER_TOKEN_CEILING;
  const small = (JSON.stringify(value) ?? '').length <= charBudget;
  if (small) {
    const whole = cheapest(value);
    if (whole.tokens <= maxTokens) return whole;
  }
  const cuts: Cuts = new Map();
  const note = (v: unknown, c: Cuts) =>
    `\n[truncated to fit ${maxTokens} tokens on a value boundary; ${describeCuts(c, v) || 'nothing could be cut'}]`;
  let current = small ? value : cutToFit(value, (v) => (JSON.stringify(v) ?? '').length <= charBudget, cuts);
  // The probes render one form, the cheapest of the value before the token cut (the ranking of the forms follows the
  // data's shape, not how much of it is kept); each probe counts the very text that would be sent, note included.
  const { render } = cheapestForm(current, tokensOf);
  current = cutToFit(current, (v, c) => tokensOf(render(v) + note(v, c)) <= maxTokens, cuts);
  // What is sent is the cheapest form of what was kept: never more tokens than the probed one, so it fits too.
  const best = cheapest(current);
  const text = best.text + note(current, cuts);
  const tokens = tokensOf(text);
  if (tokens <= maxTokens) return { text, format: best.format, tokens, truncated: true };
  // No value boundary is left to cut at (one short field over a tiny budget): the rendered text is cut instead.
  return renderText(best.text, maxTokens, tokensOf);
}

/** No JSON-like text takes more characters per o200k token than this (a long run of one letter takes 8). */
const CHARS_PER_TOKEN_CEILING = 8;

const PIECE = 1_000;

/**
 * Tokens of a text, counted line by line: o200k's pre-tokenizer always splits after a run of line breaks, so the sum
 * over lines is the count of the whole. A line over 2,000 characters is counted in pieces of at most 1,000, ending
 * before a space where there is one and never inside a character: one long run without spaces (CJK, emoji, base64)
 * costs the BPE quadratic time. Such a boundary can only stop a merge: a token or two above the count, never below.
 */
export function tokensOf(text: string, count: (piece: string) => number = countTokens): number {
  if (text.length <= 2 * PIECE) return count(text);
  let total = 0;
  for (const line of text.match(/[^\r\n]*[\r\n]*/g)!) {
    if (line.length <= 2 * PIECE) total += line ? count(line) : 0;
    else total += longLineTokens(line, count);
  }
  return total;
}

function longLineTokens(line: string, count: (piece: string) => number): number {
  let total = 0;
  for (let at = 0; at < line.length;) {
    let end = Math.min(line.length, at + PIECE);
    if (end < line.length) {
      const cut = line.slice(at, end).lastIndexOf(' ');
      if (cut > PIECE / 2) end = at + cut;
      else if (/[\uD800-\uDBFF]/.test(line[end - 1]!)) end -= 1;
    }
    total += count(line.slice(at, end));
    at = end;
  }
  return total;
}

/**
 * `tokensOf` remembering each piece's count, for one render. A cut's probes differ from one another in a few lines or
 * in their ends (a long line's pieces are cut from its start): each probe pays for what is new, not its whole text.
 */
function memoTokens(): (text: string) => number {
  const counted = new Map<string, number>();
  const count = (piece: string) => {
    let n = counted.get(piece);
    if (n === undefined) counted.set(piece, (n = countTokens(piece)));
    return n;
  };
  return (text) => tokensOf(text, count);
}

/** The smaller of compact JSON and TOON (comma or tab rows), ties to JSON. */
export function cheapest(value: unknown): ModelForm {
  const { render: _, ...form } = cheapestForm(value, tokensOf);
  return form;
}

const json = (v: unknown) => JSON.stringify(v) ?? 'null';
const TOON_RENDERS = [DELIMITERS.comma, DELIMITERS.tab].map((delimiter) => (v: unknown) => encode(v, { delimiter }));

function cheapestForm(value: unknown, tokensOf: (text: string) => number): ModelForm & { render: (v: unknown) => string } {
  const text = json(value);
  let best = { text, format: 'json' as ModelForm['format'], tokens: tokensOf(text), truncated: false, render: json };
  if (typeof value !== 'object' || value === null) return best;
  for (const render of TOON_RENDERS) {
    const toon = render(value);
    const tokens = tokensOf(toon);
    if (tokens < best.tokens) best = { text: toon, format: 'toon', tokens, truncated: false, render };
  }
  return best;
}

/** Plain text over the budget: its first lines that fit, or for one long line its first words, note included. */
function renderText(text: string, maxTokens: number, tokensOf: (text: string) => number): ModelForm {
  const ceiling = maxTokens * CHARS_PER_TOKEN_CEILING;
  if (text.length <= ceiling) {
    const tokens = tokensOf(text);
    if (tokens <= maxTokens) return { text, format: 'text', tokens, truncated: false };
  }
  // Beyond the character ceiling nothing can fit: only the text within it is a candidate.
  const head = text.slice(0, ceiling);
  const all = text.split('\n').length;
  const lines = head.split('\n');
  if (head.length < text.length && lines.length > 1) lines.pop();
  const noted = (kept: string, note: string) => `${kept}\n[truncated to fit ${maxTokens} tokens; ${note}]`;
  const byLines = (n: number) => noted(lines.slice(0, n).join('\n'), `${n} of ${all} lines shown`);
  const shownLines = largestFitting(lines.length, (n) => tokensOf(byLines(n)) <= maxTokens);
  const textForm = (text: string): ModelForm => ({ text, format: 'text', tokens: tokensOf(text), truncated: true });
  if (shownLines > 0) return textForm(byLines(shownLines));
  // One enormous line: its first words, the cut point found by recounting, not by a characters-per-token guess.
  const byChars = (n: number) => {
    const kept = cutWords(head, n);
    return noted(kept, `cut after ${kept.replace(/…$/, '').length} of ${text.length} characters`);
  };
  return textForm(byChars(largestFitting(head.length, (n) => tokensOf(byChars(n)) <= maxTokens)));
}

/** The largest n in [0, max] for which `fits(n)` holds, by binary search (0 when none does). */
function largestFitting(max: number, fits: (n: number) => boolean): number {
  let lo = 0;
  let hi = max;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
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

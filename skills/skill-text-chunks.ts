/** A long reference (a 500-line API guide) keeps its first lines: the overview and the procedure come first. */
const MAX_BODY_LINES = 80;
/** A line longer than this is cut: the sentence encoder reads about 256 tokens and the start says what it is about. */
const MAX_LINE_CHARS = 300;
/** Lines with fewer words than this (a bare link, a table rule, `---`) say nothing about what the skill is for. */
const MIN_WORDS = 4;

/** The description's sentences, when it has more than one: each meets an ask on its own instead of diluted in all. */
export function descriptionSentences(description: string): string[] {
  const sentences = description
    .split(/(?<=[.;!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.split(/\s+/).length >= 3);
  return sentences.length > 1 ? sentences : [];
}

/**
 * The body's prose, one sentence of a line at a time, each led by its heading (`Review Approach: Research first …`):
 * code blocks and markup dropped, short lines skipped, at most `MAX_BODY_LINES`.
 */
export function bodyLines(body: string): string[] {
  const out: string[] = [];
  let fenced = false;
  let heading = '';
  for (const raw of body.split('\n')) {
    if (/^\s*(```|~~~)/.test(raw)) fenced = !fenced;
    if (fenced || /^\s*(```|~~~)/.test(raw)) continue;
    const title = /^#{1,6}\s+(.*)$/.exec(raw);
    if (title) {
      heading = plain(title[1]!);
      continue;
    }
    const line = plain(raw.replace(/^\s*([-+*]|\d+[.)])\s+/, ''));
    if (line.split(' ').filter((w) => /[a-z]{3}/i.test(w)).length < MIN_WORDS) continue;
    for (const sentence of line.split(/(?<=[.!?])\s+/))
      if (sentence.split(' ').length >= MIN_WORDS) out.push((heading ? `${heading}: ${sentence}` : sentence).slice(0, MAX_LINE_CHARS));
  }
  return out.slice(0, MAX_BODY_LINES);
}

/** Markdown reduced to its words: links to their text, emphasis, quotes and table bars dropped, spaces folded. */
function plain(text: string): string {
  return text
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`>|#]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

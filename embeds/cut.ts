type Path = Array<string | number>;

/** What a cut kept of one part of a value: whole items of a list, whole entries of a map, or leading characters. */
export type Cut = { path: Path; kept: number; of: number; unit: 'items' | 'entries' | 'characters' };

/** The cuts made so far, one per part (keyed by where it is); a part cut twice keeps its original size. */
export type Cuts = Map<string, Cut>;

/** Strings shorter than this are left whole: cutting them saves little and leaves fields unreadable. */
const MIN_CUT_STRING = 200;

/**
 * Cuts `value` until `fits(value, cuts)` holds: each round the part holding the bulk is cut to the most it can keep
 * (a binary search on its count, checked with `fits` itself), and rounds go on as long as each one shrinks the value.
 * A list or map keeps at least one item, so the next round can step inside it. Returns what it could not cut further.
 */
export function cutToFit(value: unknown, fits: (v: unknown, cuts: Cuts) => boolean, cuts: Cuts): unknown {
  let current = value;
  let size = jsonLength(current);
  while (!fits(current, cuts)) {
    const target = bulkPart(current, []);
    if (!target) break;
    const { path, node } = target;
    const where = path.length ? path.join('.') : 'the result';
    const unit = typeof node === 'string' ? 'characters' : Array.isArray(node) ? 'items' : 'entries';
    const count = countOf(node);
    const of = cuts.get(where)?.of ?? count;
    const attempt = (n: number) => {
      const part = take(node, n);
      const kept = typeof part === 'string' ? part.replace(/…$/, '').length : n;
      return { value: setAt(current, path, part), cuts: new Map(cuts).set(where, { path, kept, of, unit }) };
    };
    let lo = unit === 'characters' ? 0 : 1;
    let hi = count - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      const probe = attempt(mid);
      if (fits(probe.value, probe.cuts)) lo = mid;
      else hi = mid - 1;
    }
    const next = attempt(lo);
    const nextSize = jsonLength(next.value);
    // Progress bounds the loop: a round that does not shrink the value ends it (no fixed number of rounds).
    if (nextSize >= size) break;
    current = next.value;
    size = nextSize;
    cuts.clear();
    for (const [k, c] of next.cuts) cuts.set(k, c);
  }
  return current;
}

/** The note for the cuts whose part is still shown (a part inside an item cut away later is not named). */
export function describeCuts(cuts: Cuts, value: unknown): string {
  const shown = [...cuts.entries()].filter(([, c]) => exists(value, c.path));
  return shown
    .map(([where, c]) =>
      c.unit === 'characters' ? `${where}: cut after ${c.kept} of ${c.of} characters` : `${where}: ${c.kept} of ${c.of} ${c.unit} shown`,
    )
    .join('; ');
}

/**
 * The part to cut: from the top, step into the child holding at least half of a part's size (or into the only
 * child of a part that cannot be cut) while there is one; a list, a map or a long text.
 */
function bulkPart(node: unknown, path: Path): { path: Path; node: unknown } | undefined {
  const children: Array<[string | number, unknown]> = Array.isArray(node)
    ? node.map((v, i) => [i, v])
    : typeof node === 'object' && node !== null
      ? Object.entries(node)
      : [];
  const cuttable = children.length > 1 || (typeof node === 'string' && node.length >= MIN_CUT_STRING);
  let biggest: [string | number, unknown] | undefined;
  let biggestSize = -1;
  for (const child of children) {
    const s = jsonLength(child[1]);
    if (s > biggestSize) [biggest, biggestSize] = [child, s];
  }
  if (biggest && (!cuttable || biggestSize * 2 >= jsonLength(node))) {
    const inner = bulkPart(biggest[1], [...path, biggest[0]]);
    if (inner) return inner;
  }
  return cuttable ? { path, node } : undefined;
}

function countOf(node: unknown): number {
  if (typeof node === 'string' || Array.isArray(node)) return node.length;
  return Object.keys(node as object).length;
}

function take(node: unknown, n: number): unknown {
  if (typeof node === 'string') return cutWords(node, n);
  if (Array.isArray(node)) return node.slice(0, n);
  return Object.fromEntries(Object.entries(node as object).slice(0, n));
}

/** The text cut to at most `chars` characters, at the last word boundary, marked with an ellipsis; never inside a character. */
export function cutWords(text: string, chars: number): string {
  if (text.length <= chars) return text;
  // A cut between the two halves of a surrogate pair (an emoji) would leave half a character.
  const end = chars > 0 && /[\uD800-\uDBFF]/.test(text[chars - 1]!) ? chars - 1 : chars;
  const cut = text.slice(0, end);
  const space = cut.lastIndexOf(' ');
  return `${space > end / 2 ? cut.slice(0, space) : cut}…`;
}

function setAt(value: unknown, path: Path, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? setAt(v, rest, replacement) : v));
  const obj = value as Record<string, unknown>;
  return { ...obj, [head!]: setAt(obj[head!], rest, replacement) };
}

function exists(value: unknown, path: Path): boolean {
  let node = value;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return false;
    node = (node as Record<string | number, unknown>)[key];
  }
  return true;
}

const jsonLength = (v: unknown) => (JSON.stringify(v) ?? '').length;

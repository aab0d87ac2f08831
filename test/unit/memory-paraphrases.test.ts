import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadParaphraseSet, loadRetrievalSet } from '../../bench/memory-eval.ts';

// Function words a paraphrase may share with its memory; everything else counts as content.
const FUNCTION_WORDS = new Set(
  (
    'a an the and or but if of to in on at by for from with without into about over under up out as is are was were be been ' +
    'do does did can could should must may might will would what which who whom whose when where why how there this that ' +
    'these those it its i we our us you your she her he his they their them any each every much many more most some all ' +
    'no not than then so'
  ).split(' '),
);
const contentWords = (text: string) => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !FUNCTION_WORDS.has(w));
// Two words share a stem when their first five letters (or all of the shorter one, from three letters) agree.
function sameStem(a: string, b: string): boolean {
  const n = Math.min(5, a.length, b.length);
  return n >= 3 ? a.slice(0, n) === b.slice(0, n) : a === b;
}

describe('the memory paraphrase set', () => {
  const memories = new Map(loadRetrievalSet().memories.map((m) => [m.id, m.content]));
  const { queries } = loadParaphraseSet();

  it('has at least 40 queries, half of them held out', () => {
    assert.ok(queries.length >= 40, `${queries.length} queries`);
    assert.ok(queries.filter((q) => q.split === 'held_out').length >= 20);
  });

  it('shares no content word and no stem between a query and its relevant memories', () => {
    const clashes = queries.flatMap((q) =>
      q.relevant.flatMap((id) => {
        const memory = memories.get(id);
        assert.ok(memory, `unknown memory ${id}`);
        return contentWords(q.query).flatMap((w) =>
          contentWords(memory)
            .filter((m) => sameStem(w, m))
            .map((m) => `${JSON.stringify(q.query)} ~ ${id}: ${w}/${m}`),
        );
      }),
    );
    assert.deepEqual(clashes, []);
  });
});

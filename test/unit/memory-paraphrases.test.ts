import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { loadParaphraseSet, loadRetrievalSet, type LabelledQuery } from '../../testkit/memory-eval.ts';

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

const memories = new Map(loadRetrievalSet().memories.map((m) => [m.id, m.content]));

/** Every content word a query shares (word or stem) with one of its relevant memories, as `query ~ id: word/word`. */
function clashes(queries: LabelledQuery[]): string[] {
  return queries.flatMap((q) =>
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
}

describe('the memory paraphrase set', () => {
  const { queries } = loadParaphraseSet();

  it('has at least 40 queries, half of them held out', () => {
    assert.ok(queries.length >= 40, `${queries.length} queries`);
    assert.ok(queries.filter((q) => q.split === 'held_out').length >= 20);
  });

  it('shares no content word and no stem between a query and its relevant memories', () => {
    assert.deepEqual(clashes(queries), []);
  });
});

// Written after the set above had been used for tuning, and never looked at while tuning.
describe('the held-out memory paraphrase set', () => {
  const file = new URL('../fixtures/memory/paraphrase-held-out.json', import.meta.url);
  const { queries } = JSON.parse(readFileSync(file, 'utf8')) as { queries: LabelledQuery[] };

  it('has at least 110 new queries, all held out, covering every memory at least twice', () => {
    assert.ok(queries.length >= 110, `${queries.length} queries`);
    assert.deepEqual(
      queries.filter((q) => q.split !== 'held_out').map((q) => q.query),
      [],
    );
    const texts = [...loadParaphraseSet().queries, ...queries].map((q) => q.query.toLowerCase());
    assert.deepEqual(
      texts.filter((t, i) => texts.indexOf(t) !== i),
      [],
      'queries repeated, here or from paraphrase-set.json',
    );
    const thin = [...memories.keys()].filter((id) => queries.filter((q) => q.relevant.includes(id)).length < 2);
    assert.deepEqual(thin, [], 'memories with fewer than two queries');
  });

  it('shares no content word and no stem between a query and its relevant memories', () => {
    assert.deepEqual(clashes(queries), []);
  });
});

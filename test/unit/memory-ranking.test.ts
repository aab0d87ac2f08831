import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cosine } from '../../memory/embeddings-client.ts';
import { reciprocalRankFusion } from '../../memory/rank-fusion.ts';
import { selectDiverse } from '../../memory/select-diverse.ts';
import { trigramSimilarity, trigrams } from '../../memory/trigram.ts';

describe('reciprocal rank fusion', () => {
  it('ranks first what both rankings rank high, over what only one ranks first', () => {
    const fused = reciprocalRankFusion([
      ['a', 'b', 'c'],
      ['b', 'd', 'a'],
    ]);
    assert.deepEqual(
      fused.map((f) => f.id),
      ['b', 'a', 'd', 'c'],
    );
    assert.ok(Math.abs(fused[0]!.score - (1 / 62 + 1 / 61)) < 1e-12);
  });

  it('breaks a tie of scores by the better single rank, then by the earlier ranking: the same order every time', () => {
    assert.deepEqual(
      reciprocalRankFusion([
        ['x', 'y'],
        ['y', 'x'],
      ]).map((f) => f.id),
      ['x', 'y'],
    );
    assert.deepEqual(
      reciprocalRankFusion([
        ['q', 'p'],
        ['p', 'q'],
      ]).map((f) => f.id),
      ['q', 'p'],
      'not by id',
    );
  });

  it('gives an empty list for no rankings and keeps a single ranking in order', () => {
    assert.deepEqual(reciprocalRankFusion([]), []);
    assert.deepEqual(
      reciprocalRankFusion([['x', 'y']]).map((f) => f.id),
      ['x', 'y'],
    );
  });
});

describe('trigram similarity (as pg_trgm)', () => {
  it('pads words like pg_trgm and ignores case and punctuation', () => {
    assert.deepEqual([...trigrams('Cat!')].sort(), ['  c', ' ca', 'at ', 'cat']);
    assert.equal(trigramSimilarity(trigrams('word'), trigrams('WORD.')), 1);
  });

  it('scores a typo high and unrelated words near zero', () => {
    assert.ok(trigramSimilarity(trigrams('Yirgacheffe'), trigrams('Yirgachefe')) > 0.6);
    assert.equal(trigramSimilarity(trigrams('coffee'), trigrams('xyz')), 0);
    assert.equal(trigramSimilarity(trigrams(''), trigrams('x')), 0);
  });
});

describe('selection by maximal marginal relevance', () => {
  const c = (id: string, score: number, text: string) => ({ id, score, text });

  it('drops a near-duplicate of a kept entry and keeps the next relevant one', () => {
    const kept = selectDiverse(
      [
        c('a', 0.9, 'The newsletter goes out on Thursday'),
        c('b', 0.89, 'The newsletter goes out on Thursday.'),
        c('c', 0.5, 'Subscribers number 12,400'),
      ],
      { limit: 2 },
    );
    assert.deepEqual(
      kept.map((k) => k.id),
      ['a', 'c'],
    );
  });

  it('prefers a novel entry over a redundant one of similar relevance', () => {
    const kept = selectDiverse(
      [
        c('a', 1, 'roast profile for the Ember blend'),
        c('b', 0.95, 'roast profile of the Ember blend, darker'),
        c('d', 0.94, 'Delivery by Royal Mail'),
      ],
      { limit: 2, duplicateAbove: 1 },
    );
    assert.deepEqual(
      kept.map((k) => k.id),
      ['a', 'd'],
    );
  });

  it('keeps relevance order when nothing is alike, and honours the limit', () => {
    const kept = selectDiverse([c('a', 3, 'alpha'), c('b', 2, 'bravo'), c('c', 1, 'charlie')], { limit: 2 });
    assert.deepEqual(
      kept.map((k) => k.id),
      ['a', 'b'],
    );
    assert.deepEqual(selectDiverse([], { limit: 3 }), []);
  });
});

describe('cosine', () => {
  it('is 1 for parallel vectors, 0 for orthogonal or mismatched ones', () => {
    assert.ok(Math.abs(cosine([1, 2], [2, 4]) - 1) < 1e-12);
    assert.equal(cosine([1, 0], [0, 1]), 0);
    assert.equal(cosine([1], [1, 2]), 0);
  });
});

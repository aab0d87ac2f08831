import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { corpusManifest, corpusSkip } from '../../testkit/corpus.ts';

type Ask = { ask: string; expect: string | null };

// The held-out discovery asks: written before tuning and never looked at while tuning, so only their shape is checked here.
describe('the held-out discovery asks', () => {
  const file = new URL('../fixtures/discovery/held-out-asks.json', import.meta.url);
  const set = JSON.parse(readFileSync(file, 'utf8')) as { note: string; asks: Ask[] };

  it('says where it comes from, and has at least 80 asks of which at least 30 load nothing', () => {
    assert.match(set.note, /held out/i);
    assert.ok(set.asks.length >= 80, `${set.asks.length} asks`);
    const nulls = set.asks.filter((a) => a.expect === null).length;
    assert.ok(nulls >= 30, `${nulls} asks that load nothing`);
  });

  it('has no duplicate ask and no empty one', () => {
    const texts = set.asks.map((a) => a.ask.trim().toLowerCase());
    assert.deepEqual(
      texts.filter((t, i) => t === '' || texts.indexOf(t) !== i),
      [],
    );
  });

  it('expects only skill names of the corpus, each at least five times', { skip: corpusSkip() }, () => {
    const names = corpusManifest().map((e) => e.name);
    assert.deepEqual(
      set.asks.filter((a) => a.expect !== null && !names.includes(a.expect)).map((a) => a.expect),
      [],
    );
    const thin = names.filter((n) => set.asks.filter((a) => a.expect === n).length < 5);
    assert.deepEqual(thin, [], 'corpus skills with fewer than five asks');
  });
});

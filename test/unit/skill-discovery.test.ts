import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChunkMatch } from '../../db/skill-discovery.ts';
import { discoveryChunks } from '../../skills/discovery-chunks.ts';
import { cosine } from '../../memory/embeddings-client.ts';
import { chunkScore, standings } from '../../skills/discovery-score.ts';
import { namedSkills } from '../../skills/explicit-names.ts';

const chunk = (name: string, kind: ChunkMatch['kind'], trigram: number, text = `${kind} of ${name}`): ChunkMatch => ({
  skillId: `id-${name}`,
  name,
  description: `${name} does things`,
  version: 1,
  ordinal: 0,
  status: 'active',
  kind,
  text,
  rank: 0,
  trigram,
  embedding: null,
});
const tuning = { minScore: 0.2, margin: 0.1 };
const verdicts = (matches: ChunkMatch[]) => Object.fromEntries(standings(matches, tuning).map((s) => [s.name, s.verdict]));

describe('discovery standings', () => {
  it('scores a skill by its best identity or trigger chunk, best first', () => {
    const ranked = standings([chunk('a', 'identity', 0.3), chunk('a', 'trigger', 0.9), chunk('b', 'trigger', 0.7)], tuning);
    assert.deepEqual(
      ranked.map((s) => s.name),
      ['a', 'b'],
    );
    assert.equal(ranked[0]!.positive.kind, 'trigger');
    assert.equal(ranked[0]!.positive.score, chunkScore({ rank: 0, trigram: 0.9, embedding: null }));
  });

  it('suppresses a skill whose best not_for match comes within the margin of its best positive match', () => {
    assert.deepEqual(verdicts([chunk('close', 'trigger', 0.8), chunk('close', 'not_for', 0.65)]), { close: 'suppressed' });
    assert.deepEqual(verdicts([chunk('above', 'trigger', 0.8), chunk('above', 'not_for', 0.9)]), { above: 'suppressed' });
    assert.deepEqual(verdicts([chunk('clear', 'trigger', 0.8), chunk('clear', 'not_for', 0.4)]), { clear: 'load' });
  });

  it('loads nothing below the minimum score', () => {
    assert.deepEqual(verdicts([chunk('weak', 'identity', 0.3)]), { weak: 'below' });
  });

  it('mixes in cosine similarity when both sides have embeddings', () => {
    const lexical = chunkScore({ rank: 0, trigram: 0.4, embedding: null });
    const withVector = chunkScore({ rank: 0, trigram: 0.4, embedding: [1, 0] }, [1, 0]);
    assert.equal(withVector, 0.5 * lexical + 0.5);
  });
});

describe('discovery by meaning', () => {
  // Every ask below is [1, 0]: a chunk's cosine is what discovery's vector search would give for it.
  const vector = (name: string, kind: ChunkMatch['kind'], embedding: number[], rank = 0, trigram = 0): ChunkMatch => ({
    ...chunk(name, kind, trigram),
    rank,
    embedding,
    cosine: cosine(embedding, [1, 0]),
  });
  const withCosine = { minScore: 0.2, margin: 0.05, embeddingWeight: 0.3 };

  it('adds the best cosine over every chunk to the best lexical score of the identity and triggers', () => {
    const matches = [vector('a', 'identity', [0, 1], 0, 0.4), vector('a', 'body', [1, 0])];
    const [a] = standings(matches, withCosine, [1, 0]);
    assert.ok(Math.abs(a!.positive.score - (0.7 * 0.2 + 0.3 * 1)) < 1e-9, String(a!.positive.score));
    assert.equal(a!.verdict, 'load');
    assert.equal(a!.positive.kind, 'body');
  });

  it('loads a skill whose body means what an ask says when the ask shares no word with it', () => {
    const matches = [vector('tdd', 'identity', [0, 1]), vector('tdd', 'body', [0.8, 0.6]), vector('other', 'identity', [0, 1])];
    assert.deepEqual(
      standings(matches, withCosine, [1, 0]).map((s) => [s.name, s.verdict]),
      [
        ['tdd', 'load'],
        ['other', 'below'],
      ],
    );
  });

  it('counts words only where the author wrote them to be matched, not in a long body', () => {
    const [a] = standings([vector('a', 'identity', [0, 1]), vector('a', 'body', [0, 1], 9, 0.9)], withCosine, [1, 0]);
    assert.equal(a!.verdict, 'below');
  });

  it('makes chunks of the description sentences and the body lines, headings kept and code left out', () => {
    const chunks = discoveryChunks({
      name: 'pr-fixer',
      description: 'Fixes review comments. Use when a reviewer asked for changes.',
      body: '# Steps\n\n- Fetch every open review thread of the pull request\n\n```sh\ngh pr view --comments and more words\n```\n',
      spec: { triggers: [], notFor: [] },
    });
    assert.deepEqual(
      chunks.map((c) => [c.kind, c.text]),
      [
        ['identity', 'pr fixer: Fixes review comments. Use when a reviewer asked for changes.'],
        ['description', 'Fixes review comments.'],
        ['description', 'Use when a reviewer asked for changes.'],
        ['body', 'Steps: Fetch every open review thread of the pull request'],
      ],
    );
  });
});

describe('skills named in a message', () => {
  const names = ['hazardous-plume', 'hazardous-plume-report', 'plume', 'trip-planner'];
  it('finds a name written with hyphens or spaces, in any case', () => {
    assert.deepEqual(namedSkills('please run Hazardous Plume now', names), ['hazardous-plume']);
    assert.deepEqual(namedSkills('TRIP-PLANNER for Sunday', names), ['trip-planner']);
  });
  it('lists the longest name first and does not count a name inside a longer one', () => {
    assert.deepEqual(namedSkills('hazardous plume report, then trip planner', names), ['hazardous-plume-report', 'trip-planner']);
  });
  it('matches on word boundaries only', () => {
    assert.deepEqual(namedSkills('the plumes of smoke', names), []);
    assert.deepEqual(namedSkills('plume', names), ['plume']);
  });
});

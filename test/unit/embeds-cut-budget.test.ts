import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { countTokens } from 'gpt-tokenizer';
import { renderForModel } from '../../embeds/model-form.ts';

// What the model is sent, recounted whole with the real tokenizer: never over the budget once the note says it was cut.
function assertWithin(value: unknown, budget: number): string {
  const form = renderForModel(value, budget);
  assert.equal(form.truncated, true);
  assert.match(form.text, new RegExp(`\\[truncated to fit ${budget} tokens`));
  const recounted = countTokens(form.text);
  assert.ok(recounted <= budget, `${recounted} tokens sent for a budget of ${budget}`);
  return form.text;
}

/** Deterministic bytes as base64: a blob without spaces or repeats (about 1.5 characters per token). */
const base64 = (bytes: number) =>
  Array.from({ length: Math.ceil(bytes / 32) }, (_, i) => createHash('sha256').update(String(i)).digest())
    .reduce((all, b) => Buffer.concat([all, b]), Buffer.alloc(0))
    .subarray(0, bytes)
    .toString('base64');

describe('the cut holds its budget', () => {
  it('cuts single-line Chinese text by recounting, not by a characters-per-token guess', () => {
    const text = '東京都の天気予報によると、明日は晴れのち曇りで、最高気温は二十五度の見込みです。'.repeat(400);
    assertWithin(text, 500);
    assertWithin({ summary: text }, 500);
  });

  it('cuts single-line emoji text within the budget and never splits an emoji', () => {
    const text = '🎉🚀👍🏽😀🔥✨'.repeat(3_000);
    const sent = assertWithin(text, 400);
    assert.doesNotMatch(sent, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/, 'no lone high surrogate');
    assertWithin({ reactions: text }, 400);
  });

  it('cuts a base64 blob within the budget, alone or inside a result', () => {
    const blob = base64(60_000);
    assertWithin(blob, 600);
    const sent = assertWithin({ name: 'report.pdf', content: blob, encoding: 'base64' }, 600);
    assert.match(sent, /content: cut after \d+ of 80000 characters/);
  });

  it('cuts a large map keyed by id by its entries, and says how many are shown', () => {
    const users = Object.fromEntries(
      Array.from({ length: 3_000 }, (_, i) => [
        `U${String(i).padStart(6, '0')}`,
        { name: `user ${i}`, email: `u${i}@example.com`, admin: i % 7 === 0 },
      ]),
    );
    const sent = assertWithin({ ok: true, users }, 800);
    const shown = Number(/users: (\d+) of 3000 entries shown/.exec(sent)?.[1]);
    assert.ok(shown > 10 && shown < 3_000, sent.slice(-200));
    assertWithin(users, 800);
  });

  it('keeps cutting past eight rounds when the bulk is spread over many nested lists', () => {
    const level = (depth: number): Record<string, unknown> => ({
      rows: Array.from({ length: 150 }, (_, i) => ({ at: depth * 1_000 + i, reading: `sensor ${depth}.${i} nominal` })),
      ...(depth < 12 ? { next: level(depth + 1) } : {}),
    });
    assertWithin(level(0), 700);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decode } from '@toon-format/toon';
import { countTokens } from 'gpt-tokenizer';
import { cheapest, renderForModel, tokensOf, toolResultForModel } from '../../embeds/model-form.ts';
import { previewHash, splitToolResult } from '../../embeds/tool-result.ts';

describe('tool results for the model', () => {
  it('sends a uniform list as TOON and an irregular object as compact JSON, whichever takes fewer tokens', () => {
    const rows = { rows: Array.from({ length: 10 }, (_, i) => ({ id: i, name: `row ${i}`, ok: i % 2 === 0 })) };
    const table = cheapest(rows);
    assert.equal(table.format, 'toon');
    assert.deepEqual(decode(table.text), rows);
    assert.ok(table.tokens < countTokens(JSON.stringify(rows)));
    const nested = { a: { b: { c: [1, { d: null }] } }, e: 'x' };
    assert.deepEqual(cheapest(nested), {
      text: JSON.stringify(nested),
      format: 'json',
      tokens: countTokens(JSON.stringify(nested)),
      truncated: false,
    });
  });

  it('counts tokens in pieces exactly as a whole for ordinary text', () => {
    const text = Array.from({ length: 400 }, (_, i) => `line ${i}: the worker handled job ${i * 7} in ${i % 13} ms`).join('\n');
    assert.equal(tokensOf(text), countTokens(text));
  });

  it('cuts a list over the budget to whole items, with a note, within the budget', () => {
    const logs = Array.from({ length: 2_000 }, (_, i) => ({ i, msg: `event ${i} happened somewhere` }));
    const form = renderForModel({ logs }, 500);
    assert.equal(form.truncated, true);
    assert.ok(form.tokens <= 500, `${form.tokens} tokens`);
    const shown = Number(/logs: (\d+) of 2000 items shown\]$/.exec(form.text)![1]);
    assert.ok(shown > 5);
    const body = form.text.slice(0, form.text.lastIndexOf('\n['));
    const parsed = (form.format === 'toon' ? decode(body) : JSON.parse(body)) as { logs: unknown[] };
    assert.deepEqual(parsed.logs, logs.slice(0, shown), 'the items kept are whole and in order');
  });

  it('cuts a huge run of text without spaces quickly and on a word boundary or with an ellipsis', () => {
    const form = renderForModel({ report: 'x'.repeat(200_000) }, 1_000);
    assert.equal(form.truncated, true);
    assert.ok(form.tokens <= 1_000);
    assert.match(form.text, /report: cut after \d+ of 200000 characters\]$/);
  });

  it('cuts plain text on a line boundary', () => {
    const text = Array.from({ length: 5_000 }, (_, i) => `line ${i}`).join('\n');
    const form = renderForModel(text, 300);
    assert.match(form.text, /\[truncated to fit 300 tokens; \d+ of 5000 lines shown\]$/);
    assert.ok(form.tokens <= 300);
  });

  it('adds the tool’s instructions and the canvases’ titles, and hides follow-ups and specs', () => {
    const form = toolResultForModel({
      answer: 42,
      added_instructions: 'Cite the source.',
      suggestions_follow_up_requests: ['Ask again'],
      canvas: { type: 'markdown', title: 'Notes', spec: '# hi' },
    });
    assert.equal(form.text, 'answer: 42\n\n[shown to the user as canvases: "Notes"]\n[instructions from the tool: Cite the source.]');
  });
});

describe('tool results taken apart', () => {
  it('hashes previews on the server, whatever hash the tool sent, and keeps the data apart', () => {
    const parts = splitToolResult({ data: 1, previews: [{ b: 2, a: 1, hash: 'mine' }] });
    assert.deepEqual(parts.data, { data: 1 });
    assert.equal(parts.previews[0]!.hash, previewHash({ a: 1, b: 2 }));
    assert.notEqual(parts.previews[0]!.hash, 'mine');
  });

  it('drops what is malformed with a warning each, and keeps the rest', () => {
    const parts = splitToolResult({
      ok: true,
      suggestions_follow_up_requests: ['fine', 7, 'x'.repeat(400)],
      canvas: [
        { type: 'table', title: 'T', spec: { columns: ['a'], rows: [[1]] } },
        { type: 'table', title: 'Bad', spec: { rows: [] } },
        { type: 'pie', title: 'P', spec: {} },
      ],
      added_instructions: 5,
    });
    assert.deepEqual(parts.followUps, ['fine']);
    assert.deepEqual(
      parts.canvases.map((c) => c.title),
      ['T'],
    );
    assert.equal(parts.instructions, undefined);
    assert.equal(parts.warnings.length, 5, parts.warnings.join(' | '));
  });
});

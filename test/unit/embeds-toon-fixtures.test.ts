import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countTokens } from 'gpt-tokenizer';
import { loadToonFixtures } from '../../testkit/toon-fixtures.ts';
import { TOOL_RESULT_MAX_TOKENS } from '../../contracts/embeds.ts';
import { toolResultForModel } from '../../embeds/model-form.ts';

describe('tool results of real and synthetic shapes', () => {
  const fixtures = loadToonFixtures();

  it('loads at least 24 published API responses, each naming its source, beside the synthetic set', () => {
    const real = fixtures.filter((f) => f.set === 'real');
    assert.ok(real.length >= 24, `${real.length} real fixtures`);
    for (const f of real) assert.match(f.source ?? '', /https:\/\/\S+/, `${f.name} names no documentation page`);
    assert.ok(fixtures.some((f) => f.set === 'synthetic'));
  });

  it('never sends more tokens than compact JSON, and never more than the budget', () => {
    for (const f of fixtures) {
      const sent = countTokens(toolResultForModel(f.value).text);
      const compact = countTokens(JSON.stringify(f.value));
      assert.ok(sent <= compact, `${f.set}/${f.name}: ${sent} tokens sent, ${compact} as compact JSON`);
      assert.ok(sent <= TOOL_RESULT_MAX_TOKENS, `${f.set}/${f.name}: ${sent} tokens sent`);
    }
  });
});

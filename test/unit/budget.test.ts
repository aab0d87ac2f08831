import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callCostUsd } from '../../model/pricing.ts';
import { loadConfig } from '../../config/config.ts';
import type { Tier } from '../../contracts/model.ts';
import { toHttpError } from '../../server/errors.ts';
import { missionLimits } from '../../missions/mission-limits.ts';
import { nextCallExceedsBudget } from '../../workflows/budget.ts';

describe('the budget check after a model call', () => {
  const usage = (tokens: number, costUsd = 0) => ({ tokens, costUsd });

  it('stops when the next call, estimated as the last, would pass maxTokens', () => {
    assert.equal(nextCallExceedsBudget({ maxTokens: 400 }, usage(120), usage(120)), false);
    assert.equal(nextCallExceedsBudget({ maxTokens: 400 }, usage(290), usage(170)), true);
    assert.equal(nextCallExceedsBudget({ maxTokens: 240 }, usage(120), usage(120)), false, 'exactly at the budget fits');
  });

  it('stops on maxCostUsd alone, and never without a budget', () => {
    assert.equal(nextCallExceedsBudget({ maxCostUsd: 0.5 }, usage(10, 0.4), usage(5, 0.2)), true);
    assert.equal(nextCallExceedsBudget({ maxCostUsd: 0.5, maxTokens: 1e9 }, usage(10, 0.2), usage(5, 0.1)), false);
    assert.equal(nextCallExceedsBudget(undefined, usage(1e9, 1e9), usage(1e9, 1e9)), false);
    assert.equal(nextCallExceedsBudget({}, usage(1e9, 1e9), usage(1e9, 1e9)), false);
  });
});

describe('cost of a model call', () => {
  const prices = { 'claude-x': { inputPerMTok: 3, outputPerMTok: 15 } };
  it('uses the price per million tokens of the requested model, else of the reported one', () => {
    assert.equal(callCostUsd(prices, ['claude-x'], { inputTokens: 1_000_000, outputTokens: 100_000 }), 4.5);
    assert.equal(callCostUsd(prices, ['alias', 'claude-x'], { inputTokens: 2_000_000, outputTokens: 0 }), 6);
  });
  it('is 0 for a model without a price', () => {
    assert.equal(callCostUsd(prices, ['other', undefined], { inputTokens: 5, outputTokens: 5 }), 0);
  });
});

describe('a mission budget at start', () => {
  const config = loadConfig({
    MODEL_TIER_ALLEGRO: 'a-model',
    MODEL_PRICES: '{"a-model":{"inputPerMTok":1,"outputPerMTok":2}}',
    DEFAULT_MAX_TOKENS: '5000',
  });
  const spec = (tier: string) => ({ tier: tier as Tier });
  const budget = (c: typeof config, tier: string, req: { maxTokens?: number; maxCostUsd?: number }) =>
    missionLimits(c, spec(tier), req).budget;
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return String(toHttpError(err).status);
    }
    return 'none';
  };

  it("takes the request's budget, else the server default", () => {
    assert.deepEqual(budget(config, 'allegro', {}), { maxTokens: 5000 });
    assert.deepEqual(budget(config, 'allegro', { maxTokens: 10, maxCostUsd: 1 }), { maxTokens: 10, maxCostUsd: 1 });
    assert.deepEqual(budget(loadConfig({}), 'allegro', {}), {});
  });

  it('refuses (422) a stored tier the server has no model for, and a cost budget for an unpriced model', () => {
    assert.equal(
      code(() => budget(config, 'presto', {})),
      '422',
    );
    assert.equal(
      code(() => budget(config, 'toString', {})),
      '422',
      'no prototype keys',
    );
    assert.equal(
      code(() => budget(config, 'forte', { maxCostUsd: 1 })),
      '422',
    );
    assert.equal(
      code(() => budget(config, 'forte', {})),
      'none',
    );
  });
});

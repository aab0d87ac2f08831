import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../config/config.ts';
import { missionLimits } from '../../missions/mission-limits.ts';

describe('the one turn-limit rule: the lowest of request, skill and server cap, saying which', () => {
  const config = loadConfig({
    MAX_TURNS_CAP: '25',
    DEFAULT_MAX_COST_USD: '2',
    MODEL_PRICES: '{"claude-sonnet-5-5":{"inputPerMTok":3,"outputPerMTok":15}}',
  });
  const turns = (req: number | undefined, skill: number | undefined) =>
    missionLimits(config, { tier: 'allegro', ...(skill !== undefined ? { maxTurns: skill } : {}) }, { maxTurns: req }).limits.maxTurns;

  it("takes the skill's limit when the request names none, else the server cap", () => {
    assert.deepEqual(turns(undefined, 8), { value: 8, source: 'skill' });
    assert.deepEqual(turns(undefined, undefined), { value: 25, source: 'server' });
  });

  it('honours a request below the skill and the cap', () => {
    assert.deepEqual(turns(3, 8), { value: 3, source: 'request' });
    assert.deepEqual(turns(8, 8), { value: 8, source: 'request' }, 'a tie is the request’s word');
  });

  it('lowers a request above the skill or the cap, and says what was asked', () => {
    assert.deepEqual(turns(40, 8), { value: 8, source: 'skill', requested: 40 });
    assert.deepEqual(turns(40, undefined), { value: 25, source: 'server', requested: 40 });
    assert.deepEqual(turns(undefined, 50), { value: 25, source: 'server' }, 'a skill above the cap gets the cap');
  });

  it('reports tokens and cost from the request, else the server default, else none', () => {
    const { limits } = missionLimits(config, { tier: 'allegro' }, { maxTokens: 900 });
    assert.deepEqual(limits.maxTokens, { value: 900, source: 'request' });
    assert.deepEqual(limits.maxCostUsd, { value: 2, source: 'server' });
    const none = missionLimits(loadConfig({}), { tier: 'allegro' }, {}).limits;
    assert.deepEqual(none.maxTokens, { value: null, source: 'none' });
    assert.deepEqual(none.maxCostUsd, { value: null, source: 'none' });
  });

  it('holds the server cap to the same range: MAX_TURNS_CAP above 50 stops start-up, naming it', () => {
    assert.throws(() => loadConfig({ MAX_TURNS_CAP: '51' }), /MAX_TURNS_CAP: Too big: expected number to be <=50/);
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../config/config.ts';

const base = {
  MODEL_API_KEY: 'k',
  MODEL_TIER_ALLEGRO: 'claude-main',
  MODEL_TIER_ALLEGRO_FALLBACKS: 'openai:gpt-backup',
  MODEL_OPENAI_API_KEY: 'o',
};
const fails = (value: string, pattern: RegExp) =>
  assert.throws(
    () => loadConfig({ ...base, PROVIDER_LIMITS: value }),
    (err: unknown) => err instanceof ConfigError && /PROVIDER_LIMITS/.test(err.message) && pattern.test(err.message),
  );

test('PROVIDER_LIMITS is read per provider:model, a fallback included; unset means no limits', () => {
  const config = loadConfig({
    ...base,
    PROVIDER_LIMITS: JSON.stringify({
      'anthropic:claude-main': { requestsPerMinute: 60, inputTokensPerMinute: 40_000, outputTokensPerMinute: 8_000 },
      'openai:gpt-backup': { requestsPerMinute: 500 },
    }),
  });
  assert.deepEqual(config.model.providerLimits, {
    'anthropic:claude-main': { requestsPerMinute: 60, inputTokensPerMinute: 40_000, outputTokensPerMinute: 8_000 },
    'openai:gpt-backup': { requestsPerMinute: 500 },
  });
  assert.deepEqual(loadConfig(base).model.providerLimits, {});
});

test('PROVIDER_LIMITS that are not JSON, or not an object, stop start-up naming the expected shape', () => {
  fails('rpm=60', /must be JSON/);
  fails('[1, 2]', /must be JSON/);
});

test('a PROVIDER_LIMITS entry that is not provider:model is named', () => {
  fails('{"claude-main": {"requestsPerMinute": 60}}', /"claude-main" is not provider:model/);
  fails('{"mistral:large": {"requestsPerMinute": 60}}', /"mistral:large" is not provider:model/);
});

test('a limit that is not a positive integer, an unknown limit or none at all is named with its target', () => {
  fails('{"anthropic:claude-main": {"requestsPerMinute": 0}}', /anthropic:claude-main: requestsPerMinute/);
  fails('{"anthropic:claude-main": {"requestsPerMinute": 1.5}}', /anthropic:claude-main: requestsPerMinute/);
  fails('{"anthropic:claude-main": {"rpm": 60}}', /anthropic:claude-main: .*rpm/);
  fails('{"anthropic:claude-main": {}}', /anthropic:claude-main: .*at least one of requestsPerMinute/);
});

test('a limit on a model no tier or fallback reaches (a typo) stops start-up', () => {
  fails('{"anthropic:claude-mian": {"requestsPerMinute": 60}}', /anthropic:claude-mian is not the model of a tier or a fallback/);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../config/config.ts';
import { createModelTargets } from '../../model/model-targets.ts';
import type { ModelClient } from '../../model/model-types.ts';

const fails = (env: Record<string, string>, pattern: RegExp) =>
  assert.throws(
    () => loadConfig(env),
    (err: unknown) => err instanceof ConfigError && pattern.test(err.message),
  );

test('MODEL_TIER_<TIER>_FALLBACKS is read as provider:model pairs, in order, with the endpoint of each other provider', () => {
  const config = loadConfig({
    MODEL_API_KEY: 'k',
    MODEL_TIER_FORTE_FALLBACKS: ' openai:gpt-4.1 , anthropic:claude-sonnet-5-5,openai-compatible:llama3 ',
    MODEL_OPENAI_API_KEY: 'ok',
    MODEL_OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434/v1',
  });
  assert.deepEqual(config.model.fallbacks.forte, [
    { provider: 'openai', model: 'gpt-4.1' },
    { provider: 'anthropic', model: 'claude-sonnet-5-5' },
    { provider: 'openai-compatible', model: 'llama3' },
  ]);
  assert.deepEqual(config.model.fallbacks.allegro, [], 'no chain unless configured');
  assert.equal(config.model.endpoints.openai?.apiKey, 'ok');
  assert.equal(config.model.endpoints.anthropic?.apiKey, 'k', "MODEL_PROVIDER's endpoint is MODEL_BASE_URL / MODEL_API_KEY");
});

test('a bad fallback entry fails start, naming the variable and the entry', () => {
  fails({ MODEL_TIER_ALLEGRO_FALLBACKS: 'gpt-4.1' }, /MODEL_TIER_ALLEGRO_FALLBACKS: "gpt-4.1" is not provider:model/);
  fails({ MODEL_TIER_MINUET_FALLBACKS: 'mistral:large' }, /MODEL_TIER_MINUET_FALLBACKS: "mistral:large" is not provider:model/);
  fails(
    { MODEL_TIER_FORTE: 'big', MODEL_TIER_FORTE_FALLBACKS: 'anthropic:big' },
    /MODEL_TIER_FORTE_FALLBACKS: anthropic:big is already in the chain/,
  );
});

test('a fallback to another provider with no way to reach it fails start, naming the variable to set', () => {
  fails(
    { MODEL_TIER_ALLEGRO_FALLBACKS: 'openai:gpt-4.1' },
    /MODEL_OPENAI_API_KEY: required by MODEL_TIER_ALLEGRO_FALLBACKS \(openai:gpt-4\.1\)/,
  );
  fails({ MODEL_TIER_ALLEGRO_FALLBACKS: 'openai-compatible:llama3' }, /MODEL_OPENAI_COMPATIBLE_BASE_URL: required/);
  fails({ MODEL_OPENAI_BASE_URL: 'not a url' }, /MODEL_OPENAI_BASE_URL/);
});

test("a tier's chain: the tier's model, then its fallbacks, each naming the next; past the end there is none", () => {
  const config = loadConfig({ MODEL_TIER_ALLEGRO: 'main', MODEL_TIER_ALLEGRO_FALLBACKS: 'anthropic:second', MODEL_API_KEY: 'k' });
  const primary: ModelClient = { complete: () => Promise.reject(new Error('not called')) };
  const targets = createModelTargets(config.model, primary);
  const first = targets.resolve('allegro', 0)!;
  assert.deepEqual([first.label, first.next, first.client === primary], ['anthropic:main', 'anthropic:second', true]);
  const second = targets.resolve('allegro', 1)!;
  assert.deepEqual([second.label, second.next, second.client === primary], ['anthropic:second', undefined, true]);
  assert.equal(targets.resolve('allegro', 2), undefined);
});

import { targetLabel, type ModelProvider, type ModelTarget, type Tier } from '../contracts/model.ts';
import type { ModelEndpoint } from '../config/model-fallbacks.ts';
import { createModelClient } from './create-model-client.ts';
import type { ModelClient } from './model-types.ts';

/** What a tier's chain needs from the configuration: the primary's provider and models, the fallbacks, the endpoints. */
export type ModelChainConfig = {
  provider: ModelProvider;
  tiers: Readonly<Record<Tier, string>>;
  fallbacks: Readonly<Record<Tier, readonly ModelTarget[]>>;
  endpoints: Readonly<Partial<Record<ModelProvider, Readonly<ModelEndpoint>>>>;
  promptCaching?: boolean;
};

/** One step of a tier's chain: the target, its client, and the label of the step after it (absent: the chain ends). */
export type ResolvedTarget = { target: ModelTarget; label: string; client: ModelClient; next?: string };

/** A tier's chain of models: step 0 is MODEL_TIER_<TIER>, step n the n-th of MODEL_TIER_<TIER>_FALLBACKS; undefined past its end. */
export type ModelTargets = { resolve(tier: Tier, step: number): ResolvedTarget | undefined };

/**
 * The chains, each provider's client built once: MODEL_PROVIDER's is `primary` (the process's own, or the demo's fake),
 * another provider's speaks to its own endpoint (MODEL_<PROVIDER>_BASE_URL / _API_KEY).
 */
export function createModelTargets(config: ModelChainConfig, primary: ModelClient): ModelTargets {
  const clients = new Map<ModelProvider, ModelClient>([[config.provider, primary]]);
  const clientOf = (provider: ModelProvider): ModelClient => {
    let client = clients.get(provider);
    if (!client) {
      const endpoint = config.endpoints[provider] ?? {};
      client = createModelClient({ provider, baseUrl: endpoint.baseUrl, apiKey: endpoint.apiKey, promptCaching: config.promptCaching });
      clients.set(provider, client);
    }
    return client;
  };
  const chain = (tier: Tier): ModelTarget[] => [{ provider: config.provider, model: config.tiers[tier] }, ...config.fallbacks[tier]];
  return {
    resolve(tier, step) {
      if (!config.tiers[tier]) return undefined; // a tier the map lacks has no chain at all
      const targets = chain(tier);
      const target = targets[step];
      if (!target) return undefined;
      const after = targets[step + 1];
      return { target, label: targetLabel(target), client: clientOf(target.provider), ...(after ? { next: targetLabel(after) } : {}) };
    },
  };
}

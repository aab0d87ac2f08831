import { z } from 'zod';
import { MODEL_PROVIDERS, TIERS, targetLabel, type ModelProvider, type ModelTarget, type Tier } from '../contracts/model.ts';

/** The variable of a tier's fallback chain. */
export const fallbacksVariable = (tier: Tier): string => `MODEL_TIER_${tier.toUpperCase()}_FALLBACKS`;
/** The variables of a provider's own endpoint, for fallbacks of another provider than MODEL_PROVIDER. */
export const endpointVariables = (provider: ModelProvider) => {
  const p = provider.toUpperCase().replace(/-/g, '_');
  return { baseUrl: `MODEL_${p}_BASE_URL`, apiKey: `MODEL_${p}_API_KEY` };
};

const ENTRY = new RegExp(`^(${MODEL_PROVIDERS.join('|')}):(\\S+)$`);

/** MODEL_TIER_<TIER>_FALLBACKS: `provider:model` pairs, comma-separated, tried in order after the tier's own model. */
export const fallbackList = z
  .string()
  .optional()
  .transform((s, ctx) => {
    const entries = (s ?? '')
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const targets: ModelTarget[] = [];
    for (const entry of entries) {
      const m = ENTRY.exec(entry);
      if (m) targets.push({ provider: m[1] as ModelProvider, model: m[2]! });
      else ctx.addIssue({ code: 'custom', message: `"${entry}" is not provider:model (providers: ${MODEL_PROVIDERS.join(', ')})` });
    }
    return targets;
  });

/** One provider's endpoint: the SDK base URL (absent: the provider's own) and the API key. */
export type ModelEndpoint = { baseUrl?: string; apiKey?: string };

/**
 * The problems of the chains against the endpoints, one line each naming its variable: an entry that repeats the tier's
 * model or an earlier entry (it would fail the same way), and a provider other than MODEL_PROVIDER with no way to reach it.
 */
export function fallbackProblems(
  primary: { provider: ModelProvider; tiers: Record<Tier, string> },
  chains: Record<Tier, ModelTarget[]>,
  endpoints: Partial<Record<ModelProvider, ModelEndpoint>>,
): string[] {
  const problems: string[] = [];
  for (const tier of TIERS) {
    const seen = new Set([targetLabel({ provider: primary.provider, model: primary.tiers[tier] })]);
    for (const target of chains[tier]) {
      const label = targetLabel(target);
      if (seen.has(label))
        problems.push(`${fallbacksVariable(tier)}: ${label} is already in the chain (the tier's model or an earlier entry)`);
      seen.add(label);
      if (target.provider === primary.provider) continue;
      const names = endpointVariables(target.provider);
      const endpoint = endpoints[target.provider] ?? {};
      if (target.provider === 'openai-compatible' && !endpoint.baseUrl)
        problems.push(`${names.baseUrl}: required by ${fallbacksVariable(tier)} (${label})`);
      else if (!endpoint.baseUrl && !endpoint.apiKey)
        problems.push(
          `${names.apiKey}: required by ${fallbacksVariable(tier)} (${label}), or ${names.baseUrl} for an endpoint that needs no key`,
        );
    }
  }
  return problems;
}

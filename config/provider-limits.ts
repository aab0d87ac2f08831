import { z } from 'zod';
import { MODEL_PROVIDERS, TIERS, targetLabel, type ModelProvider, type ModelTarget, type Tier } from '../contracts/model.ts';

/** One `provider:model`'s limits per minute; a limit left out is not enforced by Cadenza. */
export type ProviderLimit = { requestsPerMinute?: number; inputTokensPerMinute?: number; outputTokensPerMinute?: number };
/** PROVIDER_LIMITS parsed: each limited target's label (`provider:model`) → its limits. */
export type ProviderLimits = Readonly<Record<string, Readonly<ProviderLimit>>>;

const perMinute = z.number().int().positive();
const limitSchema = z
  .strictObject({
    requestsPerMinute: perMinute.optional(),
    inputTokensPerMinute: perMinute.optional(),
    outputTokensPerMinute: perMinute.optional(),
  })
  .refine((l) => Object.keys(l).length > 0, 'needs at least one of requestsPerMinute, inputTokensPerMinute, outputTokensPerMinute');
const LABEL = new RegExp(`^(${MODEL_PROVIDERS.join('|')}):\\S+$`);
const SHAPE = 'JSON {"<provider>:<model>": {"requestsPerMinute": n, "inputTokensPerMinute": n, "outputTokensPerMinute": n}}';

/** PROVIDER_LIMITS: JSON mapping `provider:model` to its per-minute limits (positive integers); empty: no limits. */
export const providerLimitsVariable = z
  .string()
  .optional()
  .transform((s, ctx): ProviderLimits => {
    if (s === undefined || s.trim() === '') return {};
    let raw: unknown;
    try {
      raw = JSON.parse(s);
    } catch {
      ctx.addIssue({ code: 'custom', message: `must be ${SHAPE}` });
      return z.NEVER;
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      ctx.addIssue({ code: 'custom', message: `must be ${SHAPE}` });
      return z.NEVER;
    }
    const limits: Record<string, ProviderLimit> = {};
    for (const [label, value] of Object.entries(raw)) {
      if (!LABEL.test(label)) {
        ctx.addIssue({ code: 'custom', message: `"${label}" is not provider:model (providers: ${MODEL_PROVIDERS.join(', ')})` });
        continue;
      }
      const parsed = limitSchema.safeParse(value);
      if (parsed.success) limits[label] = parsed.data;
      else
        ctx.addIssue({
          code: 'custom',
          message: `${label}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'limits'} ${i.message}`).join('; ')}`,
        });
    }
    return limits;
  });

/**
 * A limit on a target no tier's chain can reach would never apply (a typo in the model id, most often): named at
 * start-up rather than silently ignored.
 */
export function providerLimitProblems(
  limits: ProviderLimits,
  primary: { provider: ModelProvider; tiers: Record<Tier, string> },
  chains: Record<Tier, ModelTarget[]>,
): string[] {
  const reachable = new Set(
    TIERS.flatMap((t) => [targetLabel({ provider: primary.provider, model: primary.tiers[t] }), ...chains[t].map(targetLabel)]),
  );
  return Object.keys(limits)
    .filter((label) => !reachable.has(label))
    .map((label) => `PROVIDER_LIMITS: ${label} is not the model of a tier or a fallback (reachable: ${[...reachable].join(', ')})`);
}

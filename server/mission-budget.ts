import type { Config } from '../config/config.ts';
import type { MissionBudget } from '../workflows/definitions.ts';
import { HttpError } from './errors.ts';

/**
 * Checks a mission's skill tier and works out its budget (the request's, else the server default). 422 when the
 * skill names a tier the model map does not know, or a cost budget applies to a model with no price.
 */
export function missionBudget(
  config: Pick<Config, 'model' | 'budgets'>,
  frontmatter: Record<string, unknown>,
  req: { maxTokens?: number | undefined; maxCostUsd?: number | undefined },
): MissionBudget {
  const tier = frontmatter.model ?? 'allegro';
  const tiers = config.model.tiers as Readonly<Record<string, string>>;
  if (typeof tier !== 'string' || !Object.hasOwn(tiers, tier)) {
    throw new HttpError(
      'unprocessable',
      `the skill names an unknown model tier ${JSON.stringify(tier)}; known: ${Object.keys(tiers).join(', ')}`,
      {
        fields: [{ field: 'skill', message: 'unknown model tier' }],
      },
    );
  }
  const maxTokens = req.maxTokens ?? config.budgets.maxTokens;
  const maxCostUsd = req.maxCostUsd ?? config.budgets.maxCostUsd;
  const model = tiers[tier]!;
  // Without a price every call costs 0 and a cost budget would never stop anything: refuse rather than mislead.
  if (maxCostUsd !== undefined && !Object.hasOwn(config.model.prices, model)) {
    throw new HttpError('unprocessable', `maxCostUsd needs a price for model ${model} in MODEL_PRICES`, {
      fields: [{ field: 'maxCostUsd', message: `model ${model} has no price` }],
    });
  }
  return { ...(maxTokens !== undefined ? { maxTokens } : {}), ...(maxCostUsd !== undefined ? { maxCostUsd } : {}) };
}

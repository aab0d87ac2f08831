import type { Config } from '../config/config.ts';
import type { Limit, MissionLimits } from '../contracts/limits.ts';
import type { SkillSpec } from '../contracts/skill-spec.ts';
import type { MissionBudget } from '../contracts/mission.ts';
import { UnprocessableError } from '../contracts/errors.ts';

/**
 * A mission's effective limits and where each came from. Turns: the lowest of the request's `maxTurns`, the skill's
 * `max-turns` and the server's `MAX_TURNS_CAP` (each at most MAX_TURNS_CEILING). Tokens and cost: the request's, else
 * the server default, else none. 422 when the skill's tier has no model, or a cost budget applies to an unpriced model.
 */
export function missionLimits(
  config: Pick<Config, 'model' | 'budgets' | 'maxTurnsCap'>,
  spec: Pick<SkillSpec, 'tier' | 'maxTurns'>,
  req: { maxTurns?: number | undefined; maxTokens?: number | undefined; maxCostUsd?: number | undefined },
): { limits: MissionLimits; budget: MissionBudget } {
  const tiers = config.model.tiers as Readonly<Record<string, string>>;
  if (!Object.hasOwn(tiers, spec.tier)) {
    throw new UnprocessableError(`the skill names model tier ${spec.tier}, which has no model; known: ${Object.keys(tiers).join(', ')}`, {
      fields: [{ field: 'skill', message: 'unknown model tier' }],
    });
  }
  const limits: MissionLimits = {
    maxTurns: lowest(req.maxTurns, spec.maxTurns, config.maxTurnsCap),
    maxTokens: requestOrServer(req.maxTokens, config.budgets.maxTokens),
    maxCostUsd: requestOrServer(req.maxCostUsd, config.budgets.maxCostUsd),
  };
  const model = tiers[spec.tier]!;
  // Without a price every call costs 0 and a cost budget would never stop anything: refuse rather than mislead.
  if (limits.maxCostUsd.value !== null && !Object.hasOwn(config.model.prices, model)) {
    throw new UnprocessableError(`maxCostUsd needs a price for model ${model} in MODEL_PRICES`, {
      fields: [{ field: 'maxCostUsd', message: `model ${model} has no price` }],
    });
  }
  const { maxTokens, maxCostUsd } = limits;
  return {
    limits,
    budget: {
      ...(maxTokens.value !== null ? { maxTokens: maxTokens.value } : {}),
      ...(maxCostUsd.value !== null ? { maxCostUsd: maxCostUsd.value } : {}),
    },
  };
}

/** The lowest turn limit set; on a tie the request's word counts, then the skill's. */
function lowest(requested: number | undefined, skill: number | undefined, cap: number): Limit<number> {
  const set = (
    [
      [requested, 'request'],
      [skill, 'skill'],
      [cap, 'server'],
    ] as const
  ).flatMap(([value, source]) => (value === undefined ? [] : [{ value, source }]));
  const min = Math.min(...set.map((c) => c.value));
  const chosen = set.find((c) => c.value === min)!;
  return requested !== undefined && chosen.value !== requested ? { ...chosen, requested } : chosen;
}

const requestOrServer = (requested: number | undefined, server: number | undefined): Limit =>
  requested !== undefined
    ? { value: requested, source: 'request' }
    : server !== undefined
      ? { value: server, source: 'server' }
      : { value: null, source: 'none' };

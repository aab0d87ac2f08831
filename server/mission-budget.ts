import type { Client } from '@temporalio/client';
import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import { changeBudgetUpdate } from '../contracts/budgets.ts';
import { UnprocessableError } from '../contracts/errors.ts';
import type { MissionLimits } from '../contracts/limits.ts';
import type { MissionBudget } from '../contracts/mission.ts';
import { updateMission } from '../db/missions.ts';
import type { Database, MissionRow } from '../db/schema.ts';
import { getSkillVersion } from '../db/skills.ts';
import { update } from './mission-messages.ts';

const ENDED = 'the mission has ended: its budget no longer applies';

/**
 * `PATCH /missions/:id`: the mission's token and cost budgets from now on, through the workflow's `changeBudget`
 * update (a mission paused at its budget goes on once its next call fits), then on its row and in its reported
 * limits. Answers the budgets in force. A cost budget needs the model's price, as at the start (422).
 */
export async function changeMissionBudget(
  deps: { db: Kysely<Database>; temporal: Client; config: Pick<Config, 'model'> },
  mission: MissionRow,
  change: MissionBudget,
): Promise<MissionBudget> {
  if (change.maxCostUsd !== undefined) {
    const version = await getSkillVersion(deps.db, mission.skill_id, mission.skill_version);
    const model = version ? deps.config.model.tiers[version.spec.tier] : undefined;
    if (!model || !Object.hasOwn(deps.config.model.prices, model))
      throw new UnprocessableError(`maxCostUsd needs a price for model ${model ?? '(none)'} in MODEL_PRICES`, {
        fields: [{ field: 'maxCostUsd', message: `model ${model ?? '(none)'} has no price` }],
      });
  }
  const budget = await update(deps, mission, (handle) => handle.executeUpdate(changeBudgetUpdate, { args: [change] }), ENDED);
  // The reported limits say the request set them, as a start's own budget is reported.
  const limits: MissionLimits | null = mission.limits && {
    ...mission.limits,
    ...(change.maxTokens !== undefined ? { maxTokens: { value: change.maxTokens, source: 'request' } } : {}),
    ...(change.maxCostUsd !== undefined ? { maxCostUsd: { value: change.maxCostUsd, source: 'request' } } : {}),
  };
  await updateMission(deps.db, mission.id, {
    max_tokens: budget.maxTokens ?? null,
    max_cost_usd: budget.maxCostUsd ?? null,
    ...(limits ? { limits: JSON.stringify(limits) } : {}),
  });
  return budget;
}

import type { Kysely } from 'kysely';
import type { ProviderLimits } from '../config/provider-limits.ts';
import {
  askCall,
  getCall,
  lockTarget,
  markDue,
  markReserved,
  pruneCalls,
  readBucket,
  recentTurns,
  waitingCalls,
  writeBucket,
} from '../db/provider-limits.ts';
import type { Database } from '../db/schema.ts';
import type { ModelTargets } from '../model/model-targets.ts';
import type { ProviderTurn, ProviderTurnInput } from '../contracts/mission.ts';
import { pickAdmissions } from './fair-order.ts';
import { decide, fullBucket, refill } from './provider-bucket.ts';

/** What a turn at the provider limits reads: the database every worker shares, the limits, the tiers' chains. */
export type ProviderTurnDeps = {
  db: Kysely<Database>;
  limits: ProviderLimits;
  modelTargets: ModelTargets;
  /** MODEL_MAX_TOKENS: a call's output estimate, as the providers estimate it, settled with what it wrote. */
  maxTokens: number;
};

/** The shortest wait a refused call is told: a refill below this is asked again after it, not in a busy loop. */
const MIN_WAIT_MS = 250;
/** An input estimate for a mission's first call, before any call said how large its prompt is. */
const FIRST_PROMPT_TOKENS = 1_000;

/**
 * The turn activity of PROVIDER_LIMITS. Under a lock every process shares, the target's bucket is refilled (database
 * clock), the asking call joins the calls waiting for this target, and they are ordered as admission orders missions
 * (`pickAdmissions`: the user with the fewest turns in the last minute first, then the longest wait). The call is
 * reserved when the bucket holds it and every call ahead of it; otherwise it is told how long until it will.
 */
export function createProviderTurnActivities(deps: ProviderTurnDeps) {
  return {
    async reserveModelCall(input: ProviderTurnInput): Promise<ProviderTurn> {
      const step = input.fallback?.step ?? 0;
      const target = deps.modelTargets.resolve(input.tier, step)?.label ?? '';
      const limit = deps.limits[target];
      if (!limit) return { granted: true, target };
      const id = `${input.missionId}/${input.callId}/${step}`;
      const need = { inputTokens: Math.max(input.promptTokens, FIRST_PROMPT_TOKENS), outputTokens: deps.maxTokens };
      return deps.db.transaction().execute(async (trx): Promise<ProviderTurn> => {
        await lockTarget(trx, target);
        // A retried attempt whose first attempt reserved: the same turn.
        const own = await getCall(trx, id);
        if (own?.reservedAt) return { granted: true, target, reservation: id, waitedMs: Math.round(own.waitedMs) };
        await pruneCalls(trx, target);
        await askCall(trx, {
          id,
          target,
          missionId: input.missionId,
          estInputTokens: need.inputTokens,
          estOutputTokens: need.outputTokens,
        });
        const { stored, at } = await readBucket(trx, target);
        const bucket = stored ? refill(stored, limit, stored.elapsedS) : fullBucket(limit);
        const waiting = await waitingCalls(trx, target);
        const order = pickAdmissions(await recentTurns(trx, target), waiting, { perUser: undefined, perTenant: undefined });
        const byId = new Map(waiting.map((c) => [c.id, c]));
        if (!byId.has(id)) throw new Error(`mission ${input.missionId} has no row: its call cannot take a turn`);
        const ahead = order.slice(0, order.indexOf(id) + 1).map((c) => byId.get(c)!);
        const verdict = decide(
          bucket,
          limit,
          ahead.map((c) => ({ inputTokens: c.estInputTokens, outputTokens: c.estOutputTokens })),
        );
        if ('waitS' in verdict) {
          const waitMs = Math.max(MIN_WAIT_MS, Math.ceil(verdict.waitS * 1000));
          await writeBucket(trx, target, bucket, at);
          await markDue(trx, id, waitMs);
          return { granted: false, target, waitMs };
        }
        await writeBucket(trx, target, verdict.bucket, at);
        await markReserved(trx, id);
        const waitedMs = Math.round(byId.get(id)?.waitedMs ?? 0);
        return { granted: true, target, reservation: id, ...(waitedMs > 0 ? { waitedMs } : {}) };
      });
    },
  };
}

import { sql, type AliasedRawBuilder, type ExpressionBuilder, type ExpressionWrapper, type SqlBool } from 'kysely';
import type { Database } from './schema.ts';

/** Who a row belongs to: a user within a tenant. Every read of user data filters by both. */
export type Owner = { tenantId: string; userId: string };

/** Tables whose rows carry `tenant_id` and `user_id`. */
type OwnedTable = { [T in keyof Database]: Database[T] extends { tenant_id: unknown; user_id: unknown } ? T : never }[keyof Database];

/** The tenant + user filter, spelled once: `.where(whereOwner(owner))`. */
export function whereOwner(owner: Owner) {
  return <TB extends OwnedTable>(eb: ExpressionBuilder<Database, TB>): ExpressionWrapper<Database, TB, SqlBool> => {
    const b = eb as unknown as ExpressionBuilder<Database, OwnedTable>;
    return b.and([b('tenant_id', '=', owner.tenantId), b('user_id', '=', owner.userId)]) as unknown as ExpressionWrapper<
      Database,
      TB,
      SqlBool
    >;
  };
}

/**
 * The select of an insert whose owner comes from the mission row: the mission's `tenant_id`, `user_id` and `id`,
 * then `values` in order. The insert lists its columns in the same order (tenant, user, mission, then the values'),
 * so a row is written only for a mission that exists, in one statement, whoever calls.
 */
export function fromMission<TB extends keyof Database>(
  eb: ExpressionBuilder<Database, TB>,
  missionId: string,
  values: Array<AliasedRawBuilder<unknown, string>>,
) {
  const owner = [sql.ref('missions.tenant_id').as('tenant_id'), sql.ref('missions.user_id').as('user_id'), sql.ref('missions.id').as('id')];
  return eb
    .selectFrom('missions')
    .select([...owner, ...values])
    .where(sql.ref('missions.id'), '=', missionId);
}

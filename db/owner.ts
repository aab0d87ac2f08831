import type { ExpressionBuilder, ExpressionWrapper, SqlBool } from 'kysely';
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

import type { SecretScope } from '../db/provider-secrets.ts';

export type { SecretScope } from '../db/provider-secrets.ts';

/** When a scope's key for a provider was set (never its value). */
export type SecretInfo = { provider: string; setAt: Date };

/**
 * Where user and tenant keys are kept. Postgres with AES-256-GCM (`postgres-backend.ts`) is the one implemented;
 * a Vault KV v2 backend would implement the same five calls.
 */
export interface SecretBackend {
  /** False when values cannot be written or read (no master key configured). */
  readonly writable: boolean;
  put(scope: SecretScope, provider: string, value: string): Promise<{ setAt: Date; created: boolean }>;
  list(scope: SecretScope): Promise<SecretInfo[]>;
  delete(scope: SecretScope, provider: string): Promise<boolean>;
  /** For each provider, whether the user's key, the tenant's key, or neither is held (values are not read). */
  present(owner: { tenantId: string; userId: string }, providers: readonly string[]): Promise<Map<string, 'user' | 'tenant'>>;
  /** The user's key for the provider, else the tenant's; undefined when neither is held. */
  read(owner: { tenantId: string; userId: string }, provider: string): Promise<{ value: string; source: 'user' | 'tenant' } | undefined>;
}

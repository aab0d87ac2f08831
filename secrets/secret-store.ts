import type { SecretBackend, SecretInfo, SecretScope } from './secret-backend.ts';

/** Where a provider key was found, in lookup order. */
export type KeySource = 'user' | 'tenant' | 'server';

/**
 * Provider keys and their lookup: the user's key → the tenant's → the server's `PROVIDER_KEY_<ID>`. Values leave
 * this object only through `resolve`, which the tool activity calls at call time.
 */
export interface SecretStore {
  readonly writable: boolean;
  put(scope: SecretScope, provider: string, value: string): Promise<{ setAt: Date; created: boolean }>;
  list(scope: SecretScope): Promise<SecretInfo[]>;
  delete(scope: SecretScope, provider: string): Promise<boolean>;
  /** Where each provider's key would come from for this user; a provider without one is absent. */
  sources(owner: { tenantId: string; userId: string }, providers: readonly string[]): Promise<Map<string, KeySource>>;
  /** The key itself, by lookup order; undefined when none is found. */
  resolve(owner: { tenantId: string; userId: string }, provider: string): Promise<{ value: string; source: KeySource } | undefined>;
}

/** The store over a backend and the server's keys (`PROVIDER_KEY_<ID>`, parsed by config, by provider id). */
export function createSecretStore(backend: SecretBackend, serverKeys: Readonly<Record<string, string>>): SecretStore {
  const server = (provider: string) => (Object.hasOwn(serverKeys, provider) ? serverKeys[provider] : undefined);
  return {
    get writable() {
      return backend.writable;
    },
    put: (scope, provider, value) => backend.put(scope, provider, value),
    list: (scope) => backend.list(scope),
    delete: (scope, provider) => backend.delete(scope, provider),
    async sources(owner, providers) {
      const stored = await backend.present(owner, providers);
      const out = new Map<string, KeySource>();
      for (const p of providers) {
        const source = stored.get(p) ?? (server(p) !== undefined ? 'server' : undefined);
        if (source) out.set(p, source);
      }
      return out;
    },
    async resolve(owner, provider) {
      const stored = await backend.read(owner, provider);
      if (stored) return stored;
      const value = server(provider);
      return value === undefined ? undefined : { value, source: 'server' };
    },
  };
}

import type { SecretBackend, SecretScope } from './secret-backend.ts';

/** Where a Vault (or OpenBao) KV v2 engine is and how to authenticate to it. */
export type VaultOptions = { address: string; token: string; mount: string; prefix: string };

/** The parts of KV v2 answers this backend reads (write, read, metadata, list). */
type VaultJson = {
  data?: { version?: number; created_time?: string; updated_time?: string; keys?: string[]; data?: { value?: unknown } };
};

/** Vault answered with an error; the message names the status and the path, never a value. */
export class VaultError extends Error {
  override name = 'VaultError';
}

/**
 * User and tenant keys in a Vault KV v2 engine (Vault encrypts at rest and versions each write), one secret per key:
 * `<prefix>/tenants/<tenant>/users/<user>/<provider>` and `<prefix>/tenants/<tenant>/tenant/<provider>`, field `value`.
 */
export function createVaultSecretBackend(opts: VaultOptions): SecretBackend {
  const base = `${opts.address.replace(/\/+$/, '')}/v1/${encodeURIComponent(opts.mount)}`;
  const folder = (s: SecretScope) =>
    [opts.prefix, 'tenants', s.tenantId, ...(s.userId === undefined ? ['tenant'] : ['users', s.userId])].map(encodeURIComponent).join('/');
  const path = (s: SecretScope, provider: string) => `${folder(s)}/${encodeURIComponent(provider)}`;

  async function call(method: string, url: string, body?: unknown): Promise<{ status: number; json: VaultJson | undefined }> {
    const res = await fetch(url, {
      method,
      headers: { 'x-vault-token': opts.token, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (res.status === 404) return { status: 404, json: undefined };
    if (!res.ok) throw new VaultError(`vault ${method} ${new URL(url).pathname}: HTTP ${res.status}`);
    return { status: res.status, json: text ? (JSON.parse(text) as VaultJson) : undefined };
  }
  const metadata = async (s: SecretScope, provider: string) => (await call('GET', `${base}/metadata/${path(s, provider)}`)).json?.data;

  return {
    writable: true,
    async put(scope, provider, value) {
      const { json } = await call('POST', `${base}/data/${path(scope, provider)}`, { data: { value } });
      // Deleting removes all versions (below), so version 1 is a key that did not exist.
      return { setAt: new Date(json?.data?.created_time ?? Date.now()), created: json?.data?.version === 1 };
    },
    async list(scope) {
      const { json } = await call('LIST', `${base}/metadata/${folder(scope)}/`);
      const keys = (json?.data?.keys ?? []).filter((k) => !k.endsWith('/')).sort();
      const out = await Promise.all(
        keys.map(async (k) => ({ provider: decodeURIComponent(k), meta: await metadata(scope, decodeURIComponent(k)) })),
      );
      return out.flatMap((o) => (o.meta?.updated_time ? [{ provider: o.provider, setAt: new Date(o.meta.updated_time) }] : []));
    },
    async delete(scope, provider) {
      if (!(await metadata(scope, provider))) return false;
      await call('DELETE', `${base}/metadata/${path(scope, provider)}`);
      return true;
    },
    async present(owner, providers) {
      const found = new Map<string, 'user' | 'tenant'>();
      await Promise.all(
        providers.map(async (p) => {
          if (await metadata(owner, p)) found.set(p, 'user');
          else if (await metadata({ tenantId: owner.tenantId }, p)) found.set(p, 'tenant');
        }),
      );
      return found;
    },
    async read(owner, provider) {
      for (const [scope, source] of [
        [owner, 'user'],
        [{ tenantId: owner.tenantId }, 'tenant'],
      ] as const) {
        const { json } = await call('GET', `${base}/data/${path(scope, provider)}`);
        const value = json?.data?.data?.value;
        if (typeof value === 'string') return { value, source };
      }
      return undefined;
    },
  };
}

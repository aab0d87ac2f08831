import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export { decodeMasterKey } from '../config/master-key-format.ts';

/** A key sealed at rest: which master key, the GCM nonce, and ciphertext followed by its 16-byte tag. */
export type Sealed = { keyId: string; nonce: Buffer; ciphertext: Buffer };

/** AES-256-GCM under the server's master keys: the first seals, every one opens (rotation). */
export interface SecretCipher {
  readonly currentKeyId: string;
  seal(plaintext: string, aad: string): Sealed;
  /** Throws SecretCipherError (naming the key id only) when the key is unknown or the data was tampered with. */
  open(sealed: Sealed, aad: string): string;
}

/** Opening failed; the message never holds key material or plaintext. */
export class SecretCipherError extends Error {
  override name = 'SecretCipherError';
}

const TAG_BYTES = 16;

/** A master key's id, stored on every row it seals: a hash prefix, so the key itself is never stored. */
export const masterKeyId = (key: Buffer): string =>
  createHash('sha256').update('cadenza-secrets-master-key:').update(key).digest('hex').slice(0, 16);

export function createSecretCipher(keys: readonly Buffer[]): SecretCipher {
  const first = keys[0];
  if (!first) throw new TypeError('at least one master key is needed');
  const byId = new Map(keys.map((k) => [masterKeyId(k), k]));
  const currentKeyId = masterKeyId(first);
  return {
    currentKeyId,
    seal(plaintext, aad) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', first, nonce);
      cipher.setAAD(Buffer.from(aad));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return { keyId: currentKeyId, nonce, ciphertext: body };
    },
    open(sealed, aad) {
      const key = byId.get(sealed.keyId);
      if (!key) throw new SecretCipherError(`sealed under master key ${sealed.keyId}, which SECRETS_MASTER_KEY does not hold`);
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, sealed.nonce);
        decipher.setAAD(Buffer.from(aad));
        decipher.setAuthTag(sealed.ciphertext.subarray(-TAG_BYTES));
        return Buffer.concat([decipher.update(sealed.ciphertext.subarray(0, -TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretCipherError(`a secret sealed under master key ${sealed.keyId} failed its integrity check`);
      }
    },
  };
}

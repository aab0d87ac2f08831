import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret in the Standard Webhooks form: `whsec_` and 24 random bytes in base64. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/**
 * The Standard Webhooks headers of one attempt: the delivery's stable id, the attempt's time, and one `v1,<base64
 * HMAC-SHA256>` signature per secret, space-separated (during a rotation the old and the new secret both sign, so a
 * receiver holding either verifies). Signed by the `standardwebhooks` library itself.
 */
export function signedHeaders(id: string, body: string, secrets: readonly string[], at: Date): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(id, at, body)).join(' '),
  };
}

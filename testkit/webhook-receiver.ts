import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One POST a receiver got: the Standard Webhooks headers, the raw body, when it arrived. */
export type Received = { id: string; timestamp: string; signature: string; body: string; receivedAt: number; headers: IncomingHttpHeaders };

/**
 * What the receiver answers a request: a status (and a body, after `delayMs`), or `hang` (never answers, until the
 * receiver closes).
 */
export type Answer = number | { status: number; body?: string; delayMs?: number } | 'hang';

/**
 * A webhook receiver on 127.0.0.1 for tests and benches: it keeps every request and answers what `answer` says (200 by
 * default). `verified(secret)` checks each request with the `standardwebhooks` library, as any receiver would.
 */
export async function startWebhookReceiver() {
  const received: Received[] = [];
  let answer: (r: Received, index: number) => Answer = () => 200;
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        id: String(req.headers['webhook-id']),
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
        headers: req.headers,
      };
      received.push(r);
      for (const w of waiters) w();
      const a = answer(r, received.length - 1);
      if (a === 'hang') return;
      const { status, body, delayMs } = typeof a === 'number' ? { status: a, body: '', delayMs: 0 } : a;
      setTimeout(() => res.writeHead(status, { 'content-type': 'text/plain' }).end(body ?? ''), delayMs ?? 0);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    answer(fn: (r: Received, index: number) => Answer) {
      answer = fn;
    },
    /** Resolves once `predicate` holds of the requests received (checked at each arrival), or fails after `timeoutMs`. */
    async waitFor(predicate: (all: Received[]) => boolean, timeoutMs = 30_000): Promise<Received[]> {
      if (predicate(received)) return received;
      return new Promise((ok, fail) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          fail(new Error(`the receiver did not get what was awaited within ${timeoutMs} ms (${received.length} requests)`));
        }, timeoutMs);
        const check = () => {
          if (!predicate(received)) return;
          clearTimeout(timer);
          waiters.delete(check);
          ok(received);
        };
        waiters.add(check);
      });
    },
    /** The parsed payload, verified with `secret` by the `standardwebhooks` library (throws when the signature is wrong). */
    verify(r: Received, secret: string): { type: string; timestamp: string; data: Record<string, unknown> } {
      return new Webhook(secret).verify(r.body, {
        'webhook-id': r.id,
        'webhook-timestamp': r.timestamp,
        'webhook-signature': r.signature,
      }) as { type: string; timestamp: string; data: Record<string, unknown> };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

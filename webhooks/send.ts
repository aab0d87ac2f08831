import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { BlockList, LookupFunction } from 'node:net';
import { refusedAddress } from './address-guard.ts';

/** What a receiver may send back before the rest is dropped, and how long one attempt may take in all. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
export const SEND_TIMEOUT_MS = 10_000;

export type SendOutcome = { statusCode?: number; durationMs: number; error?: string };

/**
 * POSTs one delivery. The connection's own DNS lookup refuses any address the guard refuses, so a name that resolved
 * to a public address when checked cannot connect to a private one now (DNS rebinding). Redirects are not followed
 * (a 3xx is an answer like any other non-2xx); at most 64 KB of the response is read; 10 s for the whole exchange.
 */
export function sendWebhook(url: URL, headers: Record<string, string>, body: string, allowed: BlockList): Promise<SendOutcome> {
  const started = performance.now();
  const lookup: LookupFunction = (host, options, callback) =>
    dnsLookup(host, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const refused = addresses.map((a) => refusedAddress(a.address, allowed)).find(Boolean);
      if (refused) return callback(Object.assign(new Error(`refused: ${refused}`), { code: 'EREFUSED' }), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  return new Promise((resolve) => {
    const done = (o: Omit<SendOutcome, 'durationMs'>) => resolve({ ...o, durationMs: performance.now() - started });
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Cadenza-Webhooks/1', ...headers },
      lookup,
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
    });
    request.on('error', (err: Error) =>
      done({ error: err.name === 'AbortError' ? `no answer within ${SEND_TIMEOUT_MS / 1000} s` : err.message }),
    );
    request.on('response', (res) => {
      const statusCode = res.statusCode ?? 0;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // Enough to know the answer: the rest is not ours to hold.
        if (read >= MAX_RESPONSE_BYTES) {
          res.destroy();
          done({ statusCode });
        }
      });
      res.on('end', () => done({ statusCode }));
      res.on('error', () => done({ statusCode }));
    });
    request.end(body);
  });
}

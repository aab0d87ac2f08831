import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/**
 * The worker's `/metrics` on its own port: our registry, followed by the Temporal SDK's own worker metrics, which the
 * SDK's runtime serves on a loopback port of its own (`sdkMetricsUrl`) and this endpoint relays, so one scrape
 * target has both.
 */
export async function serveWorkerMetrics(o: { registry: Registry; port: number; host?: string; sdkMetricsUrl: string | undefined }) {
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
      return;
    }
    void (async () => {
      const ours = await o.registry.metrics();
      const sdk = o.sdkMetricsUrl
        ? await fetch(o.sdkMetricsUrl, { signal: AbortSignal.timeout(2_000) }).then(
            (r) => r.text(),
            () => '',
          )
        : '';
      res.writeHead(200, { 'content-type': o.registry.contentType }).end(`${ours}\n${sdk}`);
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(o.port, o.host ?? '0.0.0.0', () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  return { port, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

import { createServer, type Server } from 'node:http';
import type { Express } from 'express';
import { answerClientErrors } from './client-errors.ts';

export type ListenOptions = {
  /** 0 = any free port. */
  port: number;
  host?: string | undefined;
  /** Longest time a client may take to send a whole request (headers and body); the response (SSE) is not bound. */
  requestTimeoutMs?: number;
  /** Longest time a client may take to send the request headers (a slow-loris connection is cut after it). */
  headersTimeoutMs?: number;
};

/** Listens and returns the server and a close that drains in-flight requests. */
export async function listen(app: Express, opts: ListenOptions) {
  const requestTimeout = opts.requestTimeoutMs ?? 30_000;
  const headersTimeout = Math.min(opts.headersTimeoutMs ?? 10_000, requestTimeout);
  const server: Server = createServer(
    // Node checks both timeouts on this interval (30 s by default): check often enough for the bounds to mean something.
    { requestTimeout, headersTimeout, connectionsCheckingInterval: Math.max(250, Math.min(headersTimeout / 4, 5_000)) },
    app,
  );
  answerClientErrors(server);
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => {
      server.off('error', fail);
      ok();
    });
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : opts.port;
  return {
    server,
    port: boundPort,
    url: `http://127.0.0.1:${boundPort}`,
    /** Stops accepting, lets in-flight requests finish, ends long-lived streams after `graceMs`. */
    close: (graceMs = 5_000) =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), graceMs).unref();
      }),
  };
}

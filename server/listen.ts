import type { Server } from 'node:http';
import type { Express } from 'express';

/** Listens on the port (0 = any) and returns the server and a close that drains in-flight requests. */
export async function listen(app: Express, port: number, host = '0.0.0.0') {
  const server: Server = await new Promise((ok, fail) => {
    const s = app.listen(port, host, () => ok(s));
    s.once('error', fail);
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
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

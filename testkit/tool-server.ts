import { createServer, type IncomingHttpHeaders } from 'node:http';

/** One request a test tool received. */
export type ToolRequest = {
  tool: string;
  input: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  startedAt: number;
  endedAt?: number;
  aborted: boolean;
};
/**
 * What a scripted tool answers: a JSON body (status 200 unless given) after an optional delay, never (`hang`), or
 * a connection broken without an answer (`drop`: a network error for the caller).
 */
export type ToolReply = { status?: number; body?: unknown; delayMs?: number; hang?: boolean; drop?: boolean };
export type ToolHandler = (input: Record<string, unknown>, req: ToolRequest) => ToolReply | Promise<ToolReply>;

/** A scriptable HTTP tool server: POST /<tool> with a JSON body, as the http executor calls it. */
export async function startToolServer() {
  const handlers = new Map<string, ToolHandler>();
  const requests: ToolRequest[] = [];
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());
  const arrivals = new Set<(r: ToolRequest) => void>();
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', async () => {
      const tool = (req.url ?? '/').slice(1);
      const record: ToolRequest = { tool, input: JSON.parse(raw || '{}'), headers: req.headers, startedAt: Date.now(), aborted: false };
      requests.push(record);
      arrivals.forEach((a) => a(record));
      res.on('close', () => {
        if (!res.writableFinished) record.aborted = true;
        record.endedAt = Date.now();
        notify();
      });
      notify();
      const handler: ToolHandler = handlers.get(tool) ?? (() => ({ body: { tool, echo: record.input } }));
      const reply = await handler(record.input, record);
      if (reply.hang) return;
      if (reply.drop) return void req.socket.destroy();
      if (reply.delayMs) await new Promise((ok) => setTimeout(ok, reply.delayMs));
      if (res.destroyed) return;
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body ?? { ok: true }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    on: (tool: string, handler: ToolHandler) => void handlers.set(tool, handler),
    /**
     * The first request `match` accepts: one already received, or the next to arrive. Each request is looked at once, so
     * many waiting callers cost nothing per request as the list grows over a long bench (unlike `waitFor` over `requests`).
     */
    request(match: (r: ToolRequest) => boolean, timeoutMs = 60_000): Promise<ToolRequest> {
      const had = requests.find(match);
      if (had) return Promise.resolve(had);
      return new Promise((ok, fail) => {
        const take = (r: ToolRequest) => {
          if (!match(r)) return;
          arrivals.delete(take);
          clearTimeout(timer);
          ok(r);
        };
        const timer = setTimeout(() => (arrivals.delete(take), fail(new Error('tool server: no such request in time'))), timeoutMs);
        arrivals.add(take);
      });
    },
    /** Resolves when `cond` holds, re-checked whenever a request starts or ends. */
    waitFor(cond: () => boolean, timeoutMs = 60_000): Promise<void> {
      return new Promise((ok, fail) => {
        const check = () => {
          if (!cond()) return;
          waiters.delete(check);
          clearTimeout(timer);
          ok();
        };
        const timer = setTimeout(() => (waiters.delete(check), fail(new Error('tool server: condition not met in time'))), timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((ok) => (server.closeAllConnections(), server.close(() => ok()))),
  };
}
export type ToolServer = Awaited<ReturnType<typeof startToolServer>>;

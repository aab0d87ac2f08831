import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../lib/logger.ts';
import type { McpToolDefinition } from '../app-definition.ts';
import { fillTemplate } from '../env-template.ts';
import { formatAjvErrors, ToolTransportError, type ToolReply } from '../http-executor.ts';
import type { McpListedTool } from './mcp-listing.ts';
import type { McpServerSpec } from './mcp-schema.ts';
import { toToolReply } from './mcp-result.ts';

/** An app that declares an MCP server. */
export type McpApp = { id: string; mcp: McpServerSpec };

/** A server's progress report on one call (`notifications/progress`). */
export type McpProgress = { progress: number; total?: number; message?: string };

/** Options of one call: the activity's abort signal (cancels the request on the server) and where progress goes. */
export type McpCallOptions = { signal: AbortSignal; onProgress?: (p: McpProgress) => void; idempotencyKey?: string };

/** What the pool knows of one app's server in this process. */
export type McpServerStatus = { connected: boolean; starts: number; pid?: number };

/**
 * The MCP connections of one worker process, one per app: a server is started (or connected to) on first use and
 * reused by every call; a server that exits or whose connection breaks is dropped, and the next call starts it again.
 */
export interface McpPool {
  /** Starts (or reuses) the app's server and lists its tools, all within its `list_timeout_s`. */
  list(app: McpApp): Promise<McpListedTool[]>;
  /** Calls one tool; a tool error or a server's JSON-RPC error is a reply the model sees, a broken transport throws. */
  call(app: McpApp, tool: McpToolDefinition, input: unknown, opts: McpCallOptions): Promise<ToolReply>;
  status(appId: string): McpServerStatus;
  /** Closes every connection (a stdio server's process ends with its stdin). */
  close(): Promise<void>;
}

type Connection = { client: Client; transport: Transport; pid?: number };

const STDERR_LINES = 5;

export function createMcpPool(deps: { env: Record<string, string | undefined>; logger: Logger }): McpPool {
  const live = new Map<string, Promise<Connection>>();
  const starts = new Map<string, number>();
  const pids = new Map<string, number>();

  function connection(app: McpApp, signal: AbortSignal): Promise<Connection> {
    const existing = live.get(app.id);
    if (existing) return existing;
    const opening: Promise<Connection> = open(app, signal, () => forget(app.id, opening));
    live.set(app.id, opening);
    opening.catch(() => forget(app.id, opening));
    return opening;
  }

  function forget(appId: string, which: Promise<Connection>) {
    if (live.get(appId) !== which) return;
    live.delete(appId);
    pids.delete(appId);
  }

  async function open(app: McpApp, signal: AbortSignal, onClose: () => void): Promise<Connection> {
    starts.set(app.id, (starts.get(app.id) ?? 0) + 1);
    const stderr: string[] = [];
    const transport = createTransport(app, deps.env, stderr);
    const client = new Client({ name: 'cadenza', version: '0.1.0' });
    client.onclose = () => {
      deps.logger.info('MCP server connection closed; the next call starts it again', { app: app.id });
      onClose();
    };
    client.onerror = (err) => deps.logger.debug('MCP transport error', { app: app.id, err: String(err) });
    try {
      await client.connect(transport, { signal, timeout: app.mcp.listTimeoutS * 1000 });
    } catch (err) {
      await client.close().catch(() => {});
      const tail = stderr.length ? ` (stderr: ${stderr.join(' | ').slice(-300)})` : '';
      throw new Error(`${describe(err, app.mcp.listTimeoutS, 'start')}${tail}`, { cause: err });
    }
    const pid = transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined;
    if (pid !== undefined) pids.set(app.id, pid);
    return { client, transport, ...(pid !== undefined ? { pid } : {}) };
  }

  async function drop(appId: string) {
    const which = live.get(appId);
    if (!which) return;
    forget(appId, which);
    await which.then((c) => c.client.close()).catch(() => {});
  }

  return {
    async list(app) {
      const signal = AbortSignal.timeout(app.mcp.listTimeoutS * 1000);
      const { client } = await connection(app, signal);
      const tools: McpListedTool[] = [];
      let cursor: string | undefined;
      try {
        do {
          const page = await client.listTools(cursor ? { cursor } : {}, { signal, timeout: app.mcp.listTimeoutS * 1000 });
          tools.push(...page.tools.map((t) => ({ ...t, inputSchema: t.inputSchema as Record<string, unknown> })));
          cursor = page.nextCursor;
        } while (cursor);
      } catch (err) {
        await drop(app.id);
        throw new Error(describe(err, app.mcp.listTimeoutS, 'tools/list'), { cause: err });
      }
      return tools;
    },

    async call(app, tool, input, opts) {
      const { signal } = opts;
      signal.throwIfAborted();
      if (!tool.validateInput(input)) {
        return { ok: false, error: `input does not match the tool schema: ${formatAjvErrors(tool.validateInput.errors)}` };
      }
      let conn: Connection;
      try {
        conn = await connection(app, signal);
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        throw new ToolTransportError(`${tool.qualifiedName}: ${(err as Error).message}`, { cause: err });
      }
      try {
        const result = await conn.client.callTool(
          {
            name: tool.mcp.tool,
            arguments: input as Record<string, unknown>,
            ...(opts.idempotencyKey ? { _meta: { 'cadenza.dev/idempotency-key': opts.idempotencyKey } } : {}),
          },
          undefined,
          {
            signal,
            timeout: tool.timeoutS * 1000,
            ...(opts.onProgress
              ? {
                  onprogress: (p) =>
                    opts.onProgress!({
                      progress: p.progress,
                      ...(p.total !== undefined ? { total: p.total } : {}),
                      ...(p.message ? { message: p.message } : {}),
                    }),
                }
              : {}),
          },
        );
        return toToolReply(result as Parameters<typeof toToolReply>[0]);
      } catch (err) {
        // The SDK has sent `notifications/cancelled` for this request; the cancellation is reported as such.
        if (signal.aborted) throw signal.reason;
        if (err instanceof McpError && err.code === ErrorCode.RequestTimeout)
          return { ok: false, error: `timed out after ${tool.timeoutS}s` };
        if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed)
          return { ok: false, error: `MCP error ${err.code}: ${err.message}` };
        // The connection broke (the server died, the HTTP session ended): drop it, so the next try starts afresh.
        await drop(app.id);
        throw new ToolTransportError(`${tool.qualifiedName}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
    },

    status(appId) {
      const pid = pids.get(appId);
      return { connected: live.has(appId), starts: starts.get(appId) ?? 0, ...(pid !== undefined ? { pid } : {}) };
    },

    async close() {
      await Promise.all([...live.keys()].map(drop));
    },
  };
}

function createTransport(app: McpApp, env: Record<string, string | undefined>, stderr: string[]): Transport {
  const spec = app.mcp;
  const fill = (template: string, field: string) => {
    const filled = fillTemplate(template, { env });
    if (!filled.ok) throw new Error(`${field}: missing ${filled.missing} in the worker's environment`);
    return filled.value;
  };
  if (spec.transport === 'http') {
    const headers = Object.fromEntries(Object.entries(spec.headers).map(([k, v]) => [k, fill(v, `header ${k}`)]));
    const url = fill(spec.url, 'url');
    if (!URL.canParse(url)) throw new Error('url is not a URL once filled from the environment');
    return new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  }
  const transport = new StdioClientTransport({
    command: fill(spec.command, 'command'),
    args: spec.args.map((a, i) => fill(a, `command[${i + 1}]`)),
    env: Object.fromEntries(Object.entries(spec.env).map(([k, v]) => [k, fill(v, `env ${k}`)])),
    ...(spec.cwd ? { cwd: spec.cwd } : {}),
    stderr: 'pipe',
  });
  // Read, so a chatty server never blocks on a full pipe; the last lines explain a server that fails to start.
  transport.stderr?.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
      stderr.push(line.slice(0, 200));
      if (stderr.length > STDERR_LINES) stderr.shift();
    }
  });
  return transport;
}

function describe(err: unknown, timeoutS: number, step: string): string {
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) return `the server did not answer ${step} within ${timeoutS}s`;
  if (err instanceof Error && err.name === 'TimeoutError') return `the server did not answer ${step} within ${timeoutS}s`;
  if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) return `the server closed the connection during ${step}`;
  const code = (err as NodeJS.ErrnoException).code;
  const message = err instanceof Error ? err.message : String(err);
  return `${step} failed: ${code && !message.includes(code) ? `${code}: ` : ''}${message}`;
}

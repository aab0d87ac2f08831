import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isInitializeRequest,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { DomainError } from '../contracts/errors.ts';
import { findOwnedMission } from '../db/missions.ts';
import { getEmbed } from '../db/embeds.ts';
import { authenticate, principal, type Principal } from '../server/auth.ts';
import type { ApiDeps } from '../server/deps.ts';
import { routeGroup } from '../server/openapi/route-doc.ts';
import { embedView } from '../server/embed-view.ts';
import { missionDetail } from '../server/mission-view.ts';
import { callResult, followMission, skillTools, startSkillMission, type CallArgs } from './mcp-tools.ts';
import { serveMissionTasks, taskOf, TASKS_CAPABILITY } from './mcp-tasks.ts';
import { CHANNELS } from '../notify/notifications.ts';

const VERSION = '1';

const jsonRpc = z.looseObject({
  jsonrpc: z.literal('2.0'),
  method: z.string().optional(),
  id: z.union([z.string(), z.number()]).optional(),
});
const MCP_NOTE =
  'The messages are the Model Context Protocol’s JSON-RPC (its own schemas state them), over its Streamable HTTP transport: `initialize` opens a session and `mcp-session-id` names it afterwards. Any API key; listing tools needs skill.read, calling one mission.run, reading a resource mission.read.';
/** The OpenAPI documentation of `/mcp` (the protocol's own schemas state its messages). */
export const mcpRouteDocs = routeGroup('/mcp', 'mcp', [
  {
    method: 'post',
    path: '/',
    summary: 'MCP over Streamable HTTP: one JSON-RPC message from an MCP client',
    description: MCP_NOTE,
    access: { capabilities: [] },
    body: jsonRpc,
    responses: {
      200: {
        media: 'text/event-stream',
        body: 'text',
        description: 'The answer, as JSON or as an SSE stream (progress notifications, then the result)',
      },
      202: { media: 'none' },
    },
  },
  {
    method: 'get',
    path: '/',
    summary: 'MCP over Streamable HTTP: the session’s stream of server messages',
    description: MCP_NOTE,
    access: { capabilities: [] },
    responses: { 200: { media: 'text/event-stream', body: 'text' } },
  },
  {
    method: 'delete',
    path: '/',
    summary: 'MCP over Streamable HTTP: end the session',
    description: MCP_NOTE,
    access: { capabilities: [] },
    responses: { 200: { media: 'none' } },
  },
]);

/**
 * `/mcp`: Cadenza as an MCP server over Streamable HTTP (the official SDK's server and transport), on the same keys
 * and capabilities as the REST API. Each MCP session is a transport of this process (a deployment of several API
 * processes routes a session to one, by its `mcp-session-id`); every request names its key again, and the session
 * answers only the key's own user.
 */
export function mcpRouter(deps: ApiDeps): Router {
  const router = Router();
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server; owner: string }>();
  router.use(authenticate(deps.db));
  // An owner's skills changed (a trigger on `skills`, from any process): that owner's sessions here list again.
  deps.notifications.listen(CHANNELS.skills, (owner) => {
    for (const s of sessions.values()) if (s.owner === owner) void s.server.sendToolListChanged().catch(() => {});
  });

  const handle = async (req: Request, res: Response) => {
    const who = principal(res);
    const owner = `${who.tenantId}/${who.userId}`;
    (req as Request & { auth?: AuthInfo }).auth = {
      token: 'api-key',
      clientId: owner,
      scopes: who.capabilities,
      extra: { principal: who },
    };
    const id = req.header('mcp-session-id');
    const known = id ? sessions.get(id) : undefined;
    if (id && (!known || known.owner !== owner)) return void rpcError(res, 404, 'no such MCP session');
    if (known) return known.transport.handleRequest(req, res, req.body);
    if (req.method !== 'POST' || !isInitializeRequest(req.body)) return void rpcError(res, 400, 'start an MCP session with initialize');
    const server = createMcpServer(deps);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void sessions.set(sid, { transport, server, owner }),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };
  router.post('/', (req, res, next) => void handle(req, res).catch(next));
  router.get('/', (req, res, next) => void handle(req, res).catch(next));
  router.delete('/', (req, res, next) => void handle(req, res).catch(next));
  return router;
}

/** A JSON-RPC error without a request id, as the transport itself answers a request it cannot take. */
function rpcError(res: Response, status: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code: ErrorCode.InvalidRequest, message }, id: null });
}

/** One session's server: the caller's skills as tools, missions and embeds as resources. */
function createMcpServer(deps: ApiDeps): Server {
  const server = new Server(
    { name: 'cadenza', version: VERSION },
    {
      capabilities: { tools: { listChanged: true }, resources: {}, tasks: TASKS_CAPABILITY },
      instructions: 'Each tool is one of your Cadenza skills: calling it runs a durable mission of that skill on the objective.',
    },
  );
  const caller = (auth: AuthInfo | undefined, capability: string): Principal => {
    const who = auth?.extra?.principal as Principal | undefined;
    if (!who) throw new McpError(ErrorCode.InvalidRequest, 'no API key');
    if (!who.capabilities.includes(capability)) throw new McpError(ErrorCode.InvalidRequest, `this key lacks the ${capability} capability`);
    return who;
  };

  server.setRequestHandler(ListToolsRequestSchema, async (request, extra) =>
    skillTools(deps, caller(extra.authInfo, 'skill.read'), request.params?.cursor),
  );

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const owner = caller(extra.authInfo, 'mission.run');
    const args = (request.params.arguments ?? {}) as Partial<CallArgs>;
    // A refused call is the tool's error result; a refused task has no result to be, so it is the request's error.
    const refuse = (text: string) => {
      if (request.params.task) throw new McpError(ErrorCode.InvalidParams, text);
      return { isError: true, content: [{ type: 'text' as const, text }] };
    };
    if (typeof args.objective !== 'string' || args.objective.trim() === '') return refuse('objective: a non-empty string is required');
    const token = request.params._meta?.progressToken;
    try {
      const row = await startSkillMission(deps, owner, request.params.name, args as CallArgs);
      // A task-augmented call answers at once with the task; the client polls it (mcp-tasks.ts).
      if (request.params.task) return { task: taskOf(row) };
      const ended = await followMission(deps, owner, row, {
        signal: extra.signal,
        ...(token !== undefined
          ? {
              progress: (progress: number, message: string) =>
                extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message } }),
            }
          : {}),
      });
      return await callResult(deps, ended);
    } catch (err) {
      // A refusal of the mission (a 4xx of the REST API) is the tool's error result, named as the API names it.
      if (err instanceof DomainError) return refuse(err.message);
      throw err;
    }
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: 'cadenza://missions/{id}',
        name: 'mission',
        description: 'A mission: status, result, tool calls',
        mimeType: 'application/json',
      },
      { uriTemplate: 'cadenza://embeds/{id}', name: 'embed', description: 'A tool call’s stored result', mimeType: 'application/json' },
    ],
  }));

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const owner = caller(extra.authInfo, 'mission.read');
    const { uri } = request.params;
    const [, kind, id] = /^cadenza:\/\/(missions|embeds)\/([\w-]+)$/.exec(uri) ?? [];
    const found =
      kind === 'missions'
        ? await findOwnedMission(deps.db, owner, id!).then((row) => (row ? missionDetail(deps, row) : undefined))
        : kind === 'embeds'
          ? await getEmbed(deps.db, owner, id!).then((e) => (e ? embedView(e) : undefined))
          : undefined;
    // Someone else's mission or embed is as missing as one that never was.
    if (!found) throw new McpError(ErrorCode.InvalidParams, `resource not found: ${uri}`);
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(found) }] };
  });
  serveMissionTasks(server, deps, caller);
  return server;
}

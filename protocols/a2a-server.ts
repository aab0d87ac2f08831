import { Router, type Request, type Response } from 'express';
import type { AgentCard } from '@a2a-js/sdk';
import { z } from 'zod';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { authenticate, principal, requireCapability } from '../server/auth.ts';
import type { ApiDeps } from '../server/deps.ts';
import { routeGroup } from '../server/openapi/route-doc.ts';
import { baseUrlOf, callerCard, serviceCard } from './a2a-card.ts';
import { cadenzaUser } from './a2a-caller.ts';
import { CadenzaRequestHandler } from './a2a-handler.ts';

/** A request without `A2A-Version: 1.0` speaks protocol 0.3 (the SDK's compatibility layer translates it). */
const legacyCompat = { enabled: true };
const cardSchema = z.looseObject({
  name: z.string(),
  supportedInterfaces: z.array(z.looseObject({ url: z.string() })),
  skills: z.array(z.unknown()),
});
const A2A_NOTE =
  'The messages are A2A’s JSON-RPC, whose own schemas state them: protocol 1.0 with `A2A-Version: 1.0` (SendMessage, SendStreamingMessage, GetTask, CancelTask), 0.3 without it (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`). A message runs a mission of one of your skills (`metadata.skill` on the message, or your only active skill) or continues one (`taskId`, or the `contextId` of a session); the task id is the mission id. Sending and cancelling need mission.run, reading mission.read.';

/** The OpenAPI documentation of the A2A face: the cards, and `/a2a` (the protocol's own schemas state its messages). */
export const a2aRouteDocs = [
  routeGroup('/.well-known', 'a2a', [
    {
      method: 'get',
      path: '/agent-card.json',
      summary: 'A2A agent card of the service: the JSON-RPC endpoint and its Bearer scheme (no user’s skills)',
      access: 'public',
      responses: { 200: cardSchema },
    },
  ]),
  routeGroup('/a2a', 'a2a', [
    {
      method: 'get',
      path: '/agent-card.json',
      summary: 'The caller’s A2A agent card: the service’s, with the caller’s active skills as its skills',
      access: { capabilities: ['skill.read'] },
      responses: { 200: cardSchema },
    },
    {
      method: 'post',
      path: '/',
      summary: 'A2A over JSON-RPC: one request from an A2A client',
      description: A2A_NOTE,
      access: { capabilities: [] },
      body: z.looseObject({ jsonrpc: z.literal('2.0'), method: z.string(), id: z.union([z.string(), z.number()]).optional() }),
      responses: {
        200: {
          media: 'text/event-stream',
          body: 'text',
          description: 'The JSON-RPC answer, or for a streaming call an SSE stream of them',
        },
      },
    },
  ]),
];

/** `/.well-known/agent-card.json`: the service's card, public. */
export function a2aCardRouter(): Router {
  return Router().use(
    '/.well-known/agent-card.json',
    cardRoute(async (req) => serviceCard(baseUrlOf(req)), 3600),
  );
}

/**
 * `/a2a`: Cadenza as an A2A agent (the official SDK's request handler and JSON-RPC transport), on the same keys and
 * capabilities as the REST API; and `/a2a/agent-card.json`, the caller's own card (never cached by a shared cache).
 */
export function a2aRouter(deps: ApiDeps): Router {
  const router = Router();
  const handler = new CadenzaRequestHandler(deps);
  router.use(authenticate(deps.db));
  router.use(
    '/agent-card.json',
    requireCapability('skill.read'),
    cardRoute((req, res) => callerCard(deps, principal(res), baseUrlOf(req)), 0),
  );
  router.use(jsonRpcHandler({ requestHandler: handler, userBuilder: cadenzaUser, legacyCompat }));
  return router;
}

/**
 * A card served by the SDK's card handler (ETag, caching, the 0.3 shape for a client without `A2A-Version: 1.0`); the
 * card names absolute URLs, so it is built for each request's address.
 */
function cardRoute(card: (req: Request, res: Response) => Promise<AgentCard>, maxAge: number): Router {
  return Router().get('/', (req, res, next) =>
    agentCardHandler({ agentCardProvider: () => card(req, res), cache: { maxAge }, legacyCompat })(req, res, next),
  );
}

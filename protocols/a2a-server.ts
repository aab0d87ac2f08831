import { Router } from 'express';
import { z } from 'zod';
import { agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { authenticate, principal, requireCapability } from '../server/auth.ts';
import type { ApiDeps } from '../server/deps.ts';
import { routeGroup } from '../server/openapi/route-doc.ts';
import { baseUrlOf, callerCard, serviceCard } from './a2a-card.ts';
import { cadenzaUser } from './a2a-caller.ts';
import { CadenzaRequestHandler } from './a2a-handler.ts';

const cardSchema = z.looseObject({
  name: z.string(),
  supportedInterfaces: z.array(z.looseObject({ url: z.string() })),
  skills: z.array(z.unknown()),
});
const A2A_NOTE =
  'The messages are A2A’s JSON-RPC (protocol 1.0; its own schemas state them): SendMessage and SendStreamingMessage run a mission of one of your skills (`metadata.skill` on the message, or your only active skill) or continue one (`taskId`, or the `contextId` of a session), GetTask reads it, CancelTask cancels it. The task id is the mission id. Sending needs mission.run, reading mission.read.';

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

/** `/.well-known/agent-card.json`: the service's card, public (the SDK's card handler: ETag, caching). */
export function a2aCardRouter(): Router {
  const router = Router();
  // The SDK's handler is a router answering GET `/`: it is mounted at the card's path.
  router.use('/.well-known/agent-card.json', (req, res, next) =>
    agentCardHandler({ agentCardProvider: async () => serviceCard(baseUrlOf(req)) })(req, res, next),
  );
  return router;
}

/**
 * `/a2a`: Cadenza as an A2A agent (the official SDK's request handler and JSON-RPC transport), on the same keys and
 * capabilities as the REST API; and `/a2a/agent-card.json`, the caller's own card.
 */
export function a2aRouter(deps: ApiDeps): Router {
  const router = Router();
  const handler = new CadenzaRequestHandler(deps);
  router.use(authenticate(deps.db));
  router.use('/agent-card.json', requireCapability('skill.read'), (req, res, next) =>
    agentCardHandler({ agentCardProvider: () => callerCard(deps, principal(res), baseUrlOf(req)), cache: { maxAge: 0 } })(req, res, next),
  );
  router.use(jsonRpcHandler({ requestHandler: handler, userBuilder: cadenzaUser }));
  return router;
}

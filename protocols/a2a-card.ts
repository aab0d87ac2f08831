import type { Request } from 'express';
import { A2A_PROTOCOL_VERSION, type AgentCard, type AgentSkill } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import { listOwnedSkills } from '../db/skills.ts';
import type { Principal } from '../server/auth.ts';
import type { ApiDeps } from '../server/deps.ts';

/** Where the JSON-RPC endpoint is mounted; the cards point their interface here. */
export const A2A_PATH = '/a2a';
const VERSION = '1';

/**
 * The service's card: what Cadenza is, where its JSON-RPC endpoint is and how to authenticate. No user's skills: those
 * are on the caller's own card (`/a2a/agent-card.json`, or `GetExtendedAgentCard`), which needs a key.
 */
export function serviceCard(baseUrl: string): AgentCard {
  return {
    name: 'Cadenza',
    description:
      'Durable skill missions: each message runs (or continues) a mission of one of your Cadenza skills; the task id is the mission id. ' +
      'Name the skill in the message metadata (`skill`) unless you have exactly one active skill.',
    // Protocol 1.0, and 0.3 on the same endpoint (its `message/send`, `tasks/get`… names) for clients not yet on 1.0.
    supportedInterfaces: duplicateInterfacesForLegacy(
      [{ url: `${baseUrl}${A2A_PATH}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
      ['JSONRPC'],
    ),
    provider: undefined,
    version: VERSION,
    documentationUrl: `${baseUrl}/docs`,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: true },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: { description: 'A Cadenza API key (cdz_…), the same as the REST API’s', scheme: 'Bearer', bearerFormat: 'API key' },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
    signatures: [],
  };
}

/** The caller's card: the service's, with the caller's active skills as the agent's skills. */
export async function callerCard(deps: Pick<ApiDeps, 'db'>, who: Principal, baseUrl: string): Promise<AgentCard> {
  const skills = await listOwnedSkills(deps.db, who, 'active');
  return {
    ...serviceCard(baseUrl),
    skills: skills.map((s): AgentSkill => ({
      id: s.name,
      name: s.name,
      description: s.description,
      tags: ['cadenza-skill'],
      examples: [],
      inputModes: ['text/plain'],
      outputModes: ['text/plain'],
      securityRequirements: [],
    })),
  };
}

/** The address a client reached this process by (the cards name absolute URLs). */
export function baseUrlOf(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

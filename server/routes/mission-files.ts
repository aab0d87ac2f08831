import { Router } from 'express';
import { z } from 'zod';
import { getMissionFile, listMissionFiles } from '../../db/mission-files.ts';
import { findOwnedMission } from '../../db/missions.ts';
import { fileRef } from '../../embeds/tool-files.ts';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { notFound } from '../errors.ts';
import { routeGroup, timestamp } from '../openapi/route-doc.ts';

const fileSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  mediaType: z.string(),
  size: z.number().int(),
  url: z.string(),
  toolUseId: z.string(),
  tool: z.string(),
  sha256: z.string(),
  createdAt: timestamp,
});
const read = { capabilities: ['mission.read' as const] };

/** The OpenAPI documentation of the routes below. */
export const missionFileRouteDocs = routeGroup('/api/v1/missions', 'missions', [
  {
    method: 'get',
    path: '/:id/files',
    summary: "The files a mission's tools and scripts returned, in the order they were stored",
    access: read,
    responses: { 200: z.looseObject({ items: z.array(fileSchema) }) },
  },
  {
    method: 'get',
    path: '/:id/files/:fileId',
    summary: "One file's bytes, as an attachment of its stored media type (never rendered inline)",
    access: read,
    responses: {
      200: { media: 'application/octet-stream', body: 'binary', description: "The file's bytes; Content-Type is its stored media type." },
    },
  },
]);

/**
 * A mission's files: listed, and downloaded by their owner only (someone else's is a 404). A download is always an
 * attachment with nosniff and a sandboxing CSP, so a file a tool called text/html never runs as a page of this origin.
 */
export function missionFilesRouter({ db }: ApiDeps): Router {
  const router = Router();
  router.get('/:id/files', authenticate(db), requireCapability('mission.read'), async (req, res) => {
    const mission = await findOwnedMission(db, principal(res), String(req.params.id));
    if (!mission) throw notFound('mission');
    const rows = await listMissionFiles(db, mission.id);
    res.json({
      items: rows.map((r) => ({ ...fileRef(r), toolUseId: r.tool_use_id, tool: r.tool, sha256: r.sha256, createdAt: r.created_at })),
    });
  });
  router.get('/:id/files/:fileId', authenticate(db), requireCapability('mission.read'), async (req, res) => {
    const file = await getMissionFile(db, principal(res), String(req.params.id), String(req.params.fileId));
    if (!file) throw notFound('file');
    // attachment() sets a type from the name's extension: the stored media type is set after it.
    res
      .attachment(file.name.split('/').at(-1))
      .type(file.media_type)
      .set('x-content-type-options', 'nosniff')
      .set('content-security-policy', "sandbox; default-src 'none'")
      .set('cache-control', 'private, no-store')
      .send(file.bytes);
  });
  return router;
}

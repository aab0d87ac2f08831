import { Router, type Response } from 'express';
import { z } from 'zod';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { HttpError } from '../errors.ts';
import { readSkillUpload, readZipUpload, ZIP_TYPES } from '../skill-input.ts';
import { addSkillVersion, authorSkill, importFromGit, importSkill, promoteMission } from '../skill-service.ts';
import { validate } from '../validate.ts';
import { SKILL_NAME_PATTERN } from '../../contracts/names.ts';
import type { SkillRow } from '../../db/schema.ts';
import { routeGroup } from '../openapi/route-doc.ts';
import { skillReadsRouter } from './skill-reads.ts';
import { skillReviewRouter } from './skill-review.ts';

// Everything else is drafted from the run; an empty body (or none) takes every default.
const promotionBody = z
  .object({
    name: z.string().max(64).regex(SKILL_NAME_PATTERN, 'must be lowercase letters, digits and single hyphens').optional(),
    description: z.string().trim().min(1).max(1024).optional(),
  })
  .strict()
  .default({});

const gitImportBody = z
  .object({
    url: z.string().min(1).max(2000),
    ref: z.string().min(1).max(200).optional(),
    path: z.string().min(1).max(255).optional(),
  })
  .strict();

/** What a write answers: the skill, its active version and the SKILL.md warnings. */
export const skillWrittenSchema = z.looseObject({
  id: z.uuid(),
  name: z.string(),
  version: z.number().int(),
  status: z.enum(['draft', 'active', 'quarantined']),
  source: z.string(),
  warnings: z.array(z.looseObject({ field: z.string(), message: z.string() })),
});
const write = { capabilities: ['skill.write' as const] };
// A skill as raw SKILL.md, JSON {skillMd}, or a zipped folder.
const upload = {
  'text/markdown': 'text',
  'application/json': z.object({ skillMd: z.string().min(1) }),
  'application/zip': 'binary',
} as const;
/** The OpenAPI documentation of the skill routes (reads and review in their own files). */
export const skillRouteDocs = routeGroup('/api/v1/skills', 'skills', [
  {
    method: 'post',
    path: '/',
    summary: 'Author a skill (strict validation)',
    access: write,
    body: upload,
    responses: { 201: skillWrittenSchema },
  },
  {
    method: 'post',
    path: '/import',
    summary: 'Import a skill leniently; it starts quarantined',
    access: write,
    body: upload,
    responses: { 201: skillWrittenSchema },
  },
  {
    method: 'post',
    path: '/import/zip',
    summary: 'Import a zipped skill folder',
    access: write,
    body: { 'application/zip': 'binary' },
    responses: { 201: skillWrittenSchema },
  },
  {
    method: 'post',
    path: '/from-mission/:missionId',
    summary: 'Draft a skill from a finished mission',
    access: { capabilities: ['skill.write', 'mission.read'] },
    body: promotionBody,
    responses: { 201: skillWrittenSchema.extend({ missionId: z.uuid(), skillMd: z.string() }) },
  },
  {
    method: 'post',
    path: '/import/git',
    summary: 'Import a skill from a git repository',
    access: write,
    body: gitImportBody,
    responses: { 201: skillWrittenSchema },
  },
  {
    method: 'post',
    path: '/:id/versions',
    summary: 'Add a version (becomes active)',
    access: write,
    body: upload,
    responses: { 201: skillWrittenSchema },
  },
]);

/** Skills: author (strict), import (lenient, quarantined), new versions, reads, discovery and the review gate. */
export function skillsRouter(deps: ApiDeps): Router {
  const { db } = deps;
  const caps = deps.config.skills.bundle;
  const router = Router();
  router.use(authenticate(db));
  const created = (res: Response, row: SkillRow, extra: Record<string, unknown> = {}) =>
    res.status(201).json({ id: row.id, name: row.name, version: row.active_version, status: row.status, source: row.source, ...extra });

  router.post('/', requireCapability('skill.write'), async (req, res) => {
    const { row, warnings } = await authorSkill(deps, principal(res), await readSkillUpload(req, caps));
    created(res, row, { warnings });
  });

  router.post('/import', requireCapability('skill.write'), async (req, res) => {
    const upload = await readSkillUpload(req, caps);
    const { row, warnings } = await importSkill(deps, principal(res), upload, upload.files ? 'zip' : 'skill-md');
    created(res, row, { warnings });
  });

  router.post('/import/zip', requireCapability('skill.write'), async (req, res) => {
    if (!Buffer.isBuffer(req.body) || !req.is(ZIP_TYPES)) {
      throw new HttpError('unsupported_media_type', 'send the skill folder as a zip with content-type application/zip');
    }
    const { row, warnings } = await importSkill(deps, principal(res), await readZipUpload(req.body, caps), 'zip');
    created(res, row, { warnings });
  });

  router.post(
    '/from-mission/:missionId',
    requireCapability('skill.write'),
    requireCapability('mission.read'),
    validate('body', promotionBody),
    async (req, res) => {
      const { row, warnings, skillMd } = await promoteMission(deps, principal(res), String(req.params.missionId), res.locals.body);
      created(res, row, { warnings, missionId: row.mission_id, skillMd });
    },
  );

  router.post('/import/git', requireCapability('skill.write'), validate('body', gitImportBody), async (_req, res) => {
    const { row, warnings } = await importFromGit(deps, principal(res), res.locals.body);
    created(res, row, { warnings, commit: row.import_audit?.git?.commit });
  });

  router.post('/:id/versions', requireCapability('skill.write'), async (req, res) => {
    const { row, warnings } = await addSkillVersion(deps, principal(res), String(req.params.id), await readSkillUpload(req, caps));
    created(res, row, { warnings, ...(row.draft_version !== null ? { draftVersion: row.draft_version } : {}) });
  });

  router.use(skillReviewRouter(deps));
  router.use(skillReadsRouter(deps));
  return router;
}

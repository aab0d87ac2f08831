import express, { Router, type Response } from 'express';
import type { ApiDeps } from '../deps.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { HttpError } from '../errors.ts';
import { readSkillUpload, readZipUpload, ZIP_TYPES } from '../skill-input.ts';
import { addSkillVersion, authorSkill, importSkill } from '../skill-service.ts';
import type { SkillRow } from '../../db/schema.ts';
import { skillReadsRouter } from './skill-reads.ts';
import { skillReviewRouter } from './skill-review.ts';

/** Skills: author (strict), import (lenient, quarantined), new versions, reads, discovery and the review gate. */
export function skillsRouter(deps: ApiDeps): Router {
  const { db } = deps;
  const caps = deps.config.skills.bundle;
  const router = Router();
  router.use(authenticate(db));
  // A zip's entries plus its headers and directory: what the caps allow, and a little room for the archive itself.
  const zipBody = express.raw({ type: ZIP_TYPES, limit: caps.maxTotalBytes + caps.maxFiles * 1024 + 65_536 });
  const created = (res: Response, row: SkillRow, extra: Record<string, unknown> = {}) =>
    res.status(201).json({ id: row.id, name: row.name, version: row.active_version, status: row.status, source: row.source, ...extra });

  router.post('/', requireCapability('skill.write'), zipBody, async (req, res) => {
    const { row, warnings } = await authorSkill(deps, principal(res), await readSkillUpload(req, caps));
    created(res, row, { warnings });
  });

  router.post('/import', requireCapability('skill.write'), zipBody, async (req, res) => {
    const upload = await readSkillUpload(req, caps);
    const { row, warnings } = await importSkill(deps, principal(res), upload, upload.files ? 'zip' : 'skill-md');
    created(res, row, { warnings });
  });

  router.post('/import/zip', requireCapability('skill.write'), zipBody, async (req, res) => {
    if (!Buffer.isBuffer(req.body) || !req.is(ZIP_TYPES)) {
      throw new HttpError('unsupported_media_type', 'send the skill folder as a zip with content-type application/zip');
    }
    const { row, warnings } = await importSkill(deps, principal(res), await readZipUpload(req.body, caps), 'zip');
    created(res, row, { warnings });
  });

  router.post('/:id/versions', requireCapability('skill.write'), zipBody, async (req, res) => {
    const { row, warnings } = await addSkillVersion(deps, principal(res), String(req.params.id), await readSkillUpload(req, caps));
    created(res, row, { warnings });
  });

  router.use(skillReviewRouter(deps));
  router.use(skillReadsRouter(deps));
  return router;
}

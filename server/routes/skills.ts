import { Router, type Request } from 'express';
import { z } from 'zod';
import { createSkill, findOwnedSkill, listOwnedSkills, SkillExistsError } from '../../db/skills.ts';
import { parseSkillMd } from '../../skills/skill-md.ts';
import type { AppDeps } from '../app.ts';
import { authenticate, principal, requireCapability } from '../auth.ts';
import { HttpError, notFound } from '../errors.ts';
import { validate } from '../validate.ts';

const versionQuery = z.object({ version: z.coerce.number().int().min(1).optional() });

/** Skills (minimal registry): author from SKILL.md, list, read, export the stored bytes. */
export function skillsRouter({ db }: AppDeps): Router {
  const router = Router();
  router.use(authenticate(db));

  router.post('/', requireCapability('skill.write'), async (req, res) => {
    const skillMd = readSkillMd(req);
    const parsed = parseSkillMd(skillMd);
    if (!parsed.ok) {
      const message = parsed.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
      throw new HttpError('validation_failed', `invalid SKILL.md: ${message}`, { fields: parsed.errors });
    }
    try {
      const row = await createSkill(db, principal(res), skillMd, parsed.skill);
      res.status(201).json({ id: row.id, name: row.name, version: row.active_version, status: row.status });
    } catch (err) {
      if (err instanceof SkillExistsError) throw new HttpError('conflict', err.message);
      throw err;
    }
  });

  router.get('/', requireCapability('skill.read'), async (_req, res) => {
    const rows = await listOwnedSkills(db, principal(res));
    res.json({ items: rows.map((r) => ({ id: r.id, name: r.name, description: r.description, version: r.active_version, status: r.status })) });
  });

  router.get('/:id', requireCapability('skill.read'), validate('query', versionQuery), async (req, res) => {
    const found = await findOwnedSkill(db, principal(res), req.params.id as string, res.locals.query.version);
    if (!found) throw notFound('skill');
    const { skill, version } = found;
    res.json({
      id: skill.id,
      name: skill.name,
      description: skill.description,
      status: skill.status,
      activeVersion: skill.active_version,
      version: version.version,
      sha256: version.sha256,
      frontmatter: version.frontmatter,
      body: version.body,
    });
  });

  router.get('/:id/export', requireCapability('skill.read'), async (req, res) => {
    const found = await findOwnedSkill(db, principal(res), req.params.id as string);
    if (!found) throw notFound('skill');
    res.type('text/markdown; charset=utf-8').send(found.version.skill_md);
  });
  return router;
}

function readSkillMd(req: Request): string {
  if (Buffer.isBuffer(req.body)) return req.body.toString('utf8');
  const parsed = z.object({ skillMd: z.string().min(1) }).safeParse(req.body);
  if (!parsed.success) {
    throw new HttpError('validation_failed', 'send SKILL.md as text/markdown, or JSON {"skillMd": "..."}', {
      fields: [{ field: 'skillMd', message: 'required' }],
    });
  }
  return parsed.data.skillMd;
}

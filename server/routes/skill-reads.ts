import { Router } from 'express';
import { z } from 'zod';
import { getBundleBytes } from '../../db/skill-bundles.ts';
import { findOwnedSkill, listOwnedSkills, listVersionNumbers } from '../../db/skills.ts';
import type { SkillRow, SkillVersionRow } from '../../db/schema.ts';
import { buildBundle } from '../../skills/bundle.ts';
import { discoverSkills } from '../../skills/discover-skills.ts';
import type { ApiDeps } from '../deps.ts';
import { latestEvalRun } from '../../db/evals.ts';
import { principal, requireCapability } from '../auth.ts';
import { notFound } from '../errors.ts';
import { queryInt, validate } from '../validate.ts';
import { routeGroup, type RouteDoc } from '../openapi/route-doc.ts';

// Versions are Postgres integers: a larger number is a bad request, not a query that fails.
const versionQuery = z.object({ version: queryInt(1, 2_147_483_647).optional() });
const listQuery = z.object({ status: z.enum(['draft', 'active', 'quarantined']).optional() });
// `q` is measured before it is trimmed, as the document states its length; blank is refused by a pattern it states too.
const discoverQuery = z.object({
  q: z.string().max(4000).regex(/\S/, 'must not be blank').trim(),
  limit: queryInt(1, 20).default(5),
});

const skillSummarySchema = z.looseObject({
  id: z.uuid(),
  name: z.string(),
  description: z.string(),
  version: z.number().int(),
  status: z.enum(['draft', 'active', 'quarantined']),
  source: z.string(),
  missionId: z.uuid().nullable(),
});
const discovered = z.looseObject({ id: z.uuid(), name: z.string(), score: z.number() });
const read: RouteDoc['access'] = { capabilities: ['skill.read'] };
/** The OpenAPI documentation of the routes below. */
export const skillReadRouteDocs = routeGroup('/api/v1/skills', 'skills', [
  {
    method: 'get',
    path: '/',
    summary: "The caller's skills",
    access: read,
    query: listQuery,
    responses: { 200: z.looseObject({ items: z.array(skillSummarySchema) }) },
  },
  {
    method: 'get',
    path: '/discover',
    summary: 'Skills that fit a message, best first',
    access: read,
    query: discoverQuery,
    responses: { 200: z.looseObject({ items: z.array(discovered), suppressed: z.array(discovered) }) },
  },
  {
    method: 'get',
    path: '/:id',
    summary: 'A skill and one version (the active one unless `version`)',
    access: read,
    query: versionQuery,
    responses: {
      200: skillSummarySchema.extend({
        activeVersion: z.number().int(),
        versions: z.array(z.number().int()),
        sha256: z.string(),
        bundleSha256: z.string(),
        files: z.array(z.unknown()),
        frontmatter: z.unknown(),
        spec: z.unknown(),
        body: z.string(),
        warnings: z.array(z.unknown()),
        /** The version's eval cases, and its latest eval run (`GET /eval-runs/:id`). */
        evalCases: z.number().int(),
        latestEvalRunId: z.uuid().nullable(),
      }),
    },
  },
  {
    method: 'get',
    path: '/:id/export',
    summary: 'The stored SKILL.md, verbatim',
    access: read,
    query: versionQuery,
    responses: { 200: { media: 'text/markdown', body: 'text' } },
  },
  {
    method: 'get',
    path: '/:id/bundle',
    summary: 'The skill folder as a zip',
    access: read,
    query: versionQuery,
    responses: { 200: { media: 'application/zip', body: 'binary' } },
  },
]);

/** Reading skills: list, discover, detail, the SKILL.md bytes verbatim and the bundle zip; only the owner's. */
export function skillReadsRouter(deps: ApiDeps): Router {
  const { db } = deps;
  const router = Router();
  const owned = async (res: Parameters<typeof principal>[0], id: string, version?: number) => {
    const found = await findOwnedSkill(db, principal(res), id, version);
    if (!found) throw notFound('skill');
    return found;
  };

  router.get('/', requireCapability('skill.read'), validate('query', listQuery), async (_req, res) => {
    const rows = await listOwnedSkills(db, principal(res), res.locals.query.status);
    res.json({ items: rows.map(summary) });
  });

  router.get('/discover', requireCapability('skill.read'), validate('query', discoverQuery), async (_req, res) => {
    const { q, limit } = res.locals.query as z.infer<typeof discoverQuery>;
    const tuning = deps.config.skills.discovery;
    res.json(
      await discoverSkills(
        { db, tuning, embeddings: deps.embeddings, vectors: deps.vectors, logger: deps.logger },
        principal(res),
        q,
        limit,
      ),
    );
  });

  router.get('/:id', requireCapability('skill.read'), validate('query', versionQuery), async (req, res) => {
    const { skill, version } = await owned(res, String(req.params.id), res.locals.query.version);
    res.json({
      ...summary(skill),
      activeVersion: skill.active_version,
      versions: await listVersionNumbers(db, skill.id),
      version: version.version,
      sha256: version.sha256,
      bundleSha256: version.bundle_sha256 ?? bundleOf(skill, version).sha256,
      files: version.files.length > 0 ? version.files : bundleOf(skill, version).files,
      frontmatter: version.frontmatter,
      spec: version.spec,
      body: version.body,
      warnings: version.warnings,
      ...(version.mission_id ? { versionMissionId: version.mission_id } : {}),
      ...(skill.draft_version !== null ? { draftVersion: skill.draft_version } : {}),
      evalCases: version.evals?.cases.length ?? 0,
      latestEvalRunId: (await latestEvalRun(db, skill.id, version.version))?.id ?? null,
      ...(version.audit ? { audit: version.audit } : {}),
      ...(skill.import_audit ? { importAudit: skill.import_audit } : {}),
    });
  });

  router.get('/:id/export', requireCapability('skill.read'), validate('query', versionQuery), async (req, res) => {
    const { version } = await owned(res, String(req.params.id), res.locals.query.version);
    res.type('text/markdown; charset=utf-8').send(version.skill_md);
  });

  router.get('/:id/bundle', requireCapability('skill.read'), validate('query', versionQuery), async (req, res) => {
    const { skill, version } = await owned(res, String(req.params.id), res.locals.query.version);
    const stored = version.bundle_sha256 ? await getBundleBytes(db, version.bundle_sha256) : undefined;
    const bundle = stored ? { bytes: stored, sha256: version.bundle_sha256! } : bundleOf(skill, version);
    res.type('application/zip').set('etag', `"${bundle.sha256}"`).attachment(`${skill.name}-v${version.version}.zip`).send(bundle.bytes);
  });
  return router;
}

const summary = (s: SkillRow) => ({
  id: s.id,
  name: s.name,
  description: s.description,
  version: s.active_version,
  status: s.status,
  source: s.source,
  missionId: s.mission_id,
});

// Versions stored before bundles existed hold only their SKILL.md: their bundle is built the same deterministic way.
const bundleOf = (skill: SkillRow, version: SkillVersionRow) =>
  buildBundle(skill.name, [{ path: 'SKILL.md', data: Buffer.from(version.skill_md, 'utf8') }]);

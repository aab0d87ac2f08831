import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Owner } from '../db/owner.ts';
import type { Database, ImportAudit } from '../db/schema.ts';
import { createSkill, SkillExistsError } from '../db/skills.ts';
import { appendVersion, SkillRenameError, type NewVersion } from '../db/skill-versions.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import { postconditionProblems } from '../skill-scripts/declared-scripts.ts';
import { scanBundle } from '../skill-scripts/static-scan.ts';
import { embedChunks } from '../skills/embed-chunks.ts';
import type { SkillFieldError } from '../skills/frontmatter.ts';
import { parseSkillMd, type ParsedSkill } from '../skills/skill-md.ts';
import { importSkillMd } from '../skills/skill-import.ts';
import { newVersion } from '../skills/skill-version.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import { SYSTEM_TOOL_NAMES } from '../tools/system/index.ts';
import { unknownTools } from '../tools/unknown-tools.ts';
import { HttpError } from './errors.ts';
import type { SkillUpload } from './skill-input.ts';

/** What authoring and importing need. */
export type SkillServiceDeps = {
  db: Kysely<Database>;
  config: Pick<Config, 'skills'>;
  logger: Logger;
  registry?: AppRegistry | undefined;
  embeddings?: EmbeddingsClient | undefined;
};

/** Authors a new skill strictly (active at once): every problem is a 400 naming its field; warnings are kept. */
export async function authorSkill(deps: SkillServiceDeps, owner: Owner, upload: SkillUpload) {
  const { skill, warnings } = parseStrict(deps, upload);
  const version = await prepare(deps, upload, skill, warnings);
  const row = await mapStoreErrors(createSkill(deps.db, owner, { ...version, source: 'authored', status: 'active' }));
  return { row, warnings };
}

/** Imports a skill written elsewhere, leniently: it is stored quarantined, with its warnings as the audit record. */
export async function importSkill(deps: SkillServiceDeps, owner: Owner, upload: SkillUpload, format: 'skill-md' | 'zip') {
  const read = importSkillMd(upload.skillMd, { folder: upload.folder, files: upload.files?.map((f) => f.path) });
  if (!read.ok) throw invalid('SKILL.md could not be imported', read.errors);
  const warnings = [
    ...read.warnings,
    ...unknown(deps, read.skill.spec.allowedTools).map((tool) => ({
      field: 'allowed-tools',
      message: `'${tool}' is not an installed tool; missions will not offer it`,
    })),
    ...upload.skipped.map((path) => ({ field: 'bundle', message: `${path} is archiver metadata; left out` })),
    ...postconditionProblems(read.skill.spec.scripts),
  ];
  // The scan is advice for the reviewer; the sandbox is what contains a script.
  const scan = scanBundle(upload.files ?? []);
  const importAudit: ImportAudit = { format, folder: upload.folder ?? null, importedAt: new Date().toISOString(), warnings, scan };
  const version = await prepare(deps, upload, read.skill, warnings);
  const row = await mapStoreErrors(createSkill(deps.db, owner, { ...version, source: 'imported', status: 'quarantined', importAudit }));
  return { row, warnings };
}

/** Appends a strictly validated version to the owner's skill; it becomes the active version. */
export async function addSkillVersion(deps: SkillServiceDeps, owner: Owner, id: string, upload: SkillUpload) {
  const { skill, warnings } = parseStrict(deps, upload);
  const version = await prepare(deps, upload, skill, warnings);
  const row = await mapStoreErrors(appendVersion(deps.db, owner, id, version));
  if (!row) throw new HttpError('not_found', 'skill not found');
  return { row, warnings };
}

/** The strict reading, with the installed-tool check among the other checks, so one 400 lists every problem. */
function parseStrict(deps: SkillServiceDeps, upload: SkillUpload): { skill: ParsedSkill; warnings: SkillFieldError[] } {
  const parsed = parseSkillMd(upload.skillMd, {
    folder: upload.folder,
    files: upload.files?.map((f) => f.path),
    isInstalled: (tool) => unknown(deps, [tool]).length === 0,
  });
  if (!parsed.ok) throw invalid('invalid SKILL.md', parsed.errors);
  // Postconditions are read by the scripts grammar, after the frontmatter itself is valid.
  const unreadable = postconditionProblems(parsed.skill.spec.scripts);
  if (unreadable.length > 0) throw invalid('invalid SKILL.md', unreadable);
  return { skill: parsed.skill, warnings: parsed.warnings };
}

/** The tools that no installed app or system tool provides (none checked without a registry). */
const unknown = (deps: SkillServiceDeps, tools: string[]) => (deps.registry ? unknownTools(deps.registry, tools, SYSTEM_TOOL_NAMES) : []);

/** The version to store, its chunks embedded first (the endpoint is called outside the database transaction). */
async function prepare(deps: SkillServiceDeps, upload: SkillUpload, skill: ParsedSkill, warnings: SkillFieldError[]): Promise<NewVersion> {
  const version = newVersion(upload.skillMd, skill, upload.files ?? [], warnings);
  return { ...version, chunks: await embedChunks(version.chunks, deps.embeddings, deps.logger) };
}

async function mapStoreErrors<T>(stored: Promise<T>): Promise<T> {
  try {
    return await stored;
  } catch (err) {
    if (err instanceof SkillExistsError) throw new HttpError('conflict', err.message);
    if (err instanceof SkillRenameError)
      throw new HttpError('unprocessable', err.message, { fields: [{ field: 'name', message: err.message }] });
    throw err;
  }
}

function invalid(what: string, errors: SkillFieldError[]): HttpError {
  return new HttpError('validation_failed', `${what}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, { fields: errors });
}

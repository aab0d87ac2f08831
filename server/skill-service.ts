import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Owner } from '../db/owner.ts';
import type { Database, SkillRow } from '../db/schema.ts';
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

/** Authors a new skill strictly (active at once): every problem is a 400 naming its field. */
export async function authorSkill(deps: SkillServiceDeps, owner: Owner, upload: SkillUpload): Promise<SkillRow> {
  const version = await prepare(deps, upload, parseStrict(deps, upload), []);
  return mapStoreErrors(createSkill(deps.db, owner, { ...version, source: 'authored', status: 'active' }));
}

/** Imports a skill written elsewhere, leniently: it is stored quarantined, with its warnings as the audit record. */
export async function importSkill(deps: SkillServiceDeps, owner: Owner, upload: SkillUpload, format: 'skill-md' | 'zip') {
  const read = importSkillMd(upload.skillMd, { folder: upload.folder, files: upload.files?.map((f) => f.path) });
  if (!read.ok) throw invalid('SKILL.md could not be imported', read.errors);
  const warnings = [
    ...read.warnings,
    ...unknown(deps, read.skill).map((tool) => ({
      field: 'allowed-tools',
      message: `'${tool}' is not an installed tool; missions will not offer it`,
    })),
    ...upload.skipped.map((path) => ({ field: 'bundle', message: `${path} is archiver metadata; left out` })),
    ...postconditionProblems(read.skill.scripts ?? []),
  ];
  // The scan is advice for the reviewer; the sandbox is what contains a script.
  const scan = scanBundle(upload.files ?? []);
  const importAudit = { format, folder: upload.folder ?? null, importedAt: new Date().toISOString(), warnings, scan };
  const version = await prepare(deps, upload, read.skill, warnings);
  const row = await mapStoreErrors(createSkill(deps.db, owner, { ...version, source: 'imported', status: 'quarantined', importAudit }));
  return { row, warnings };
}

/** Appends a strictly validated version to the owner's skill; it becomes the active version. */
export async function addSkillVersion(deps: SkillServiceDeps, owner: Owner, id: string, upload: SkillUpload): Promise<SkillRow> {
  const version = await prepare(deps, upload, parseStrict(deps, upload), []);
  const row = await mapStoreErrors(appendVersion(deps.db, owner, id, version));
  if (!row) throw new HttpError('not_found', 'skill not found');
  return row;
}

function parseStrict(deps: SkillServiceDeps, upload: SkillUpload): ParsedSkill {
  const parsed = parseSkillMd(upload.skillMd, { folder: upload.folder, files: upload.files?.map((f) => f.path) });
  if (!parsed.ok) throw invalid('invalid SKILL.md', parsed.errors);
  const unreadable = postconditionProblems(parsed.skill.scripts ?? []);
  if (unreadable.length > 0) throw invalid('invalid SKILL.md', unreadable);
  const missing = unknown(deps, parsed.skill);
  if (missing.length > 0)
    throw invalid(
      'invalid SKILL.md',
      missing.map((tool) => ({ field: 'allowed-tools', message: `'${tool}' is not an installed tool` })),
    );
  return parsed.skill;
}

/** The skill's allowed tools that no installed app or system tool provides (none checked without a registry). */
const unknown = (deps: SkillServiceDeps, skill: ParsedSkill) =>
  deps.registry ? unknownTools(deps.registry, skill.allowedTools, SYSTEM_TOOL_NAMES) : [];

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

import type { Kysely } from 'kysely';
import type { Config } from '../config/config.ts';
import type { Owner } from '../db/owner.ts';
import type { Database, ImportAudit } from '../db/schema.ts';
import { findOwnedMission } from '../db/missions.ts';
import { createSkill, SkillExistsError } from '../db/skills.ts';
import { listReplies, listToolCalls } from '../db/transcript.ts';
import { appendVersion, SkillRenameError, type NewVersion } from '../db/skill-versions.ts';
import type { Logger } from '../lib/logger.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import { postconditionProblems } from '../skill-scripts/declared-scripts.ts';
import { scanBundle } from '../skill-scripts/static-scan.ts';
import { embedChunks } from '../skills/embed-chunks.ts';
import type { SkillFieldError } from '../skills/frontmatter.ts';
import { parseSkillMd, type ParsedSkill } from '../skills/skill-md.ts';
import { importSkillMd } from '../skills/skill-import.ts';
import { decodeUtf8 } from '../skills/bundle.ts';
import { fetchGitFolder, GitImportError, type GitSource } from '../skills/git-fetch.ts';
import { draftSkillMd, type RunCall } from '../skills/skill-draft.ts';
import { newVersion } from '../skills/skill-version.ts';
import { EVALS_PATH, evalsOfFolder, proposedEvalsJson } from '../evals/evals-file.ts';
import type { EvalSuite } from '../contracts/evals.ts';
import type { AppRegistry } from '../tools/app-registry.ts';
import { SYSTEM_TOOL_NAMES } from '../tools/system/index.ts';
import { SYSTEM_APP_ID } from '../tools/system/system-tool.ts';
import { unknownTools } from '../tools/unknown-tools.ts';
import { ConflictError, NotFoundError, TooLargeError, UnprocessableError, ValidationError } from '../contracts/errors.ts';
import type { SkillUpload } from './skill-input.ts';

/** What authoring and importing need. */
export type SkillServiceDeps = {
  db: Kysely<Database>;
  config: Pick<Config, 'skills' | 'evals'>;
  logger: Logger;
  registry?: AppRegistry | undefined;
  embeddings?: EmbeddingsClient | undefined;
};

/** Authors a new skill strictly (active at once): every problem is a 400 naming its field; warnings are kept. */
export async function authorSkill(deps: SkillServiceDeps, owner: Owner, upload: SkillUpload) {
  const { skill, warnings, evals } = parseStrict(deps, upload);
  const version = await prepare(deps, upload, skill, warnings, evals);
  const row = await mapStoreErrors(createSkill(deps.db, owner, { ...version, source: 'authored', status: 'active' }));
  return { row, warnings };
}

/** Imports a skill written elsewhere, leniently: it is stored quarantined, with its warnings as the audit record. */
export async function importSkill(
  deps: SkillServiceDeps,
  owner: Owner,
  upload: SkillUpload,
  format: ImportAudit['format'],
  git?: ImportAudit['git'],
) {
  const read = importSkillMd(upload.skillMd, { folder: upload.folder, files: upload.files?.map((f) => f.path) });
  if (!read.ok) throw invalid('SKILL.md could not be imported', read.errors);
  const evals = evalsOfFolder(upload.files, 'lenient');
  const warnings = [
    ...read.warnings,
    ...unknown(deps, read.skill.spec.allowedTools).map((tool) => ({
      field: 'allowed-tools',
      message: `'${tool}' is not an installed tool; missions will not offer it`,
    })),
    ...upload.skipped.map((path) => ({ field: 'bundle', message: `${path} is archiver metadata; left out` })),
    ...postconditionProblems(read.skill.spec.scripts),
    ...evals.warnings,
  ];
  // The scan is advice for the reviewer; the sandbox is what contains a script.
  const scan = scanBundle(upload.files ?? []);
  const importAudit: ImportAudit = {
    format,
    folder: upload.folder ?? null,
    importedAt: new Date().toISOString(),
    warnings,
    scan,
    ...(git ? { git } : {}),
  };
  const version = await prepare(deps, upload, read.skill, warnings, evals.suite);
  const row = await mapStoreErrors(createSkill(deps.db, owner, { ...version, source: 'imported', status: 'quarantined', importAudit }));
  return { row, warnings };
}

/**
 * Appends a strictly validated version to the owner's skill; it becomes the active version, or, under
 * SKILL_ACTIVATION_REQUIRES_EVAL, the draft version awaiting its eval run and activation.
 */
export async function addSkillVersion(deps: SkillServiceDeps, owner: Owner, id: string, upload: SkillUpload) {
  const { skill, warnings, evals } = parseStrict(deps, upload);
  const version = await prepare(deps, upload, skill, warnings, evals);
  const draft = deps.config.evals.requireForActivation;
  const row = await mapStoreErrors(appendVersion(deps.db, owner, id, version, { draft }));
  if (!row) throw new NotFoundError('skill not found');
  return { row, warnings };
}

/**
 * The strict reading, with the installed-tool check among the other checks, so one 400 lists every problem (those of
 * `evals/evals.json` too, by their path in that file).
 */
function parseStrict(
  deps: SkillServiceDeps,
  upload: SkillUpload,
): { skill: ParsedSkill; warnings: SkillFieldError[]; evals: EvalSuite | undefined } {
  const parsed = parseSkillMd(upload.skillMd, {
    folder: upload.folder,
    files: upload.files?.map((f) => f.path),
    isInstalled: (tool) => unknown(deps, [tool]).length === 0,
  });
  const evals = evalsOfFolder(upload.files, 'strict');
  if (!parsed.ok) throw invalid('invalid SKILL.md', [...parsed.errors, ...evals.errors]);
  // Postconditions are read by the scripts grammar, after the frontmatter itself is valid.
  const unreadable = [...postconditionProblems(parsed.skill.spec.scripts), ...evals.errors];
  if (unreadable.length > 0) throw invalid('invalid SKILL.md', unreadable);
  return { skill: parsed.skill, warnings: [...parsed.warnings, ...evals.warnings], evals: evals.suite };
}

/** The tools that no installed app or system tool provides (none checked without a registry). */
const unknown = (deps: SkillServiceDeps, tools: string[]) => (deps.registry ? unknownTools(deps.registry, tools, SYSTEM_TOOL_NAMES) : []);

/** The version to store, its chunks embedded first (the endpoint is called outside the database transaction). */
async function prepare(
  deps: SkillServiceDeps,
  upload: SkillUpload,
  skill: ParsedSkill,
  warnings: SkillFieldError[],
  evals?: EvalSuite,
): Promise<NewVersion> {
  const version = newVersion(upload.skillMd, skill, upload.files ?? [], warnings);
  return { ...version, evals, chunks: await embedChunks(version.chunks, deps.embeddings, deps.logger) };
}

async function mapStoreErrors<T>(stored: Promise<T>): Promise<T> {
  try {
    return await stored;
  } catch (err) {
    if (err instanceof SkillExistsError) throw new ConflictError(err.message);
    if (err instanceof SkillRenameError) throw new UnprocessableError(err.message, { fields: [{ field: 'name', message: err.message }] });
    throw err;
  }
}

function invalid(what: string, errors: SkillFieldError[]): ValidationError {
  return new ValidationError(`${what}: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`, { fields: errors });
}

/** What a promotion may set; the rest is drafted from the run. */
export type PromotionRequest = { name?: string | undefined; description?: string | undefined };

/**
 * Drafts a skill from one of the owner's completed missions (objective and tool calls as an editable procedure,
 * `allowed-tools` = the app tools it used) and stores it as a `draft` with source `promoted` and the mission linked.
 */
export async function promoteMission(deps: SkillServiceDeps, owner: Owner, missionId: string, request: PromotionRequest) {
  const mission = await findOwnedMission(deps.db, owner, missionId);
  if (!mission) throw new NotFoundError('mission not found');
  if (mission.status !== 'completed')
    throw new ConflictError(`only a completed mission can be promoted to a skill; this one is ${mission.status}`);
  const calls = await runCalls(deps.db, mission.id);
  const name = request.name ?? draftName(mission.objective, mission.id);
  const description =
    request.description ?? `Repeats a procedure that worked (a run of ${mission.skill_name}): ${oneLine(mission.objective)}`.slice(0, 1024);
  const allowedTools = [...new Set(calls.map((c) => c.tool).filter((t) => !t.startsWith(`${SYSTEM_APP_ID}.`)))];
  const skillMd = draftSkillMd(
    { missionId: mission.id, skillName: mission.skill_name, skillVersion: mission.skill_version, objective: mission.objective, calls },
    { name, description, allowedTools },
  );
  // The draft proposes one eval case from the run, so its first review can run an eval at once.
  const evalsJson = proposedEvalsJson(name, { objective: mission.objective, answer: mission.result?.text ?? '', tools: allowedTools });
  const upload: SkillUpload = {
    skillMd,
    folder: undefined,
    files: [{ path: EVALS_PATH, data: Buffer.from(evalsJson, 'utf8') }],
    skipped: [],
  };
  const { skill, warnings, evals } = parseStrict(deps, upload);
  const version = await prepare(deps, upload, skill, warnings, evals);
  const row = await mapStoreErrors(createSkill(deps.db, owner, { ...version, missionId: mission.id, source: 'promoted', status: 'draft' }));
  return { row, warnings, skillMd };
}

/** The run's tool calls in order, each with the input the model gave it (from the transcript) and its error. */
async function runCalls(db: Kysely<Database>, missionId: string): Promise<RunCall[]> {
  const [rows, replies] = await Promise.all([listToolCalls(db, missionId), listReplies(db, missionId)]);
  // Tool-use ids may repeat across turns (`call_0`), so an input is keyed by its turn too.
  // Within a turn the calls ran in parallel; they are listed in the order the model asked for them.
  const asked = new Map<string, { input: unknown; order: number }>();
  for (const reply of replies)
    reply.content.forEach((b, order) => b.type === 'tool_use' && asked.set(`${reply.turn}/${b.id}`, { input: b.input, order }));
  const order = (r: { turn: number; tool_use_id: string }) => asked.get(`${r.turn}/${r.tool_use_id}`)?.order ?? Infinity;
  const ordered = [...rows].sort((a, b) => a.turn - b.turn || order(a) - order(b));
  return ordered.map((r) => ({
    turn: r.turn,
    toolUseId: r.tool_use_id,
    tool: r.tool,
    status: r.status,
    attempt: r.attempt,
    input: asked.get(`${r.turn}/${r.tool_use_id}`)?.input,
    ...(r.status === 'error' ? { error: typeof r.output === 'string' ? r.output : JSON.stringify(r.output) } : {}),
  }));
}

/** A valid skill name from the objective's first words (`plan-a-weekend-in-oslo`), else one from the mission id. */
function draftName(objective: string, missionId: string): string {
  const slug = objective
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .split('-')
    .slice(0, 6)
    .join('-')
    .slice(0, 48)
    .replace(/-+$/, '');
  return slug
    ? `${slug}-${missionId
        .slice(0, 6)
        .toLowerCase()
        .replace(/[^a-z0-9]/g, '')}`
    : `run-${missionId.slice(0, 8)}`;
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * Imports the skill folder at `path` of one ref of a git repository (shallow fetch with the git CLI), under the
 * zip upload's caps and checks; quarantined like every import, with the URL and resolved commit in the audit.
 */
export async function importFromGit(deps: SkillServiceDeps & { config: Pick<Config, 'skills'> }, owner: Owner, source: GitSource) {
  const { bundle, git } = deps.config.skills;
  let fetched;
  try {
    fetched = await fetchGitFolder(source, git, bundle);
  } catch (err) {
    if (!(err instanceof GitImportError)) throw err;
    const fields = [{ field: err.field, message: err.message }];
    if (err.tooLarge) throw new TooLargeError(`git import refused: ${err.message}`, { fields });
    const Refusal = err.field === 'url' || err.field === 'bundle' ? ValidationError : UnprocessableError;
    throw new Refusal(`git import refused: ${err.message}`, { fields });
  }
  const skillMd = decodeUtf8(fetched.files.find((f) => f.path === 'SKILL.md')!.data);
  if (skillMd === undefined || skillMd.includes('\u0000'))
    throw new ValidationError('git import refused: SKILL.md is not valid UTF-8 text', {
      fields: [{ field: 'bundle', message: 'SKILL.md is not valid UTF-8 text' }],
    });
  const upload: SkillUpload = { skillMd, folder: fetched.folder, files: fetched.files, skipped: [] };
  return importSkill(deps, owner, upload, 'git', {
    url: source.url,
    ref: source.ref ?? null,
    path: source.path ?? null,
    commit: fetched.commit,
  });
}

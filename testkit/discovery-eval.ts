import { readdirSync, readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Owner } from '../db/owner.ts';
import type { Database } from '../db/schema.ts';
import { createSkill } from '../db/skills.ts';
import type { EmbeddingsClient } from '../memory/embeddings-client.ts';
import { corpusManifest, CORPUS_DIR } from './corpus.ts';
import type { ChunkMatch } from '../db/skill-discovery.ts';
import { matchMessage, proposeSkills, type DiscoveryDeps } from '../skills/discover-skills.ts';
import type { DiscoveryTuning } from '../skills/discovery-score.ts';
import { embedChunks } from '../skills/embed-chunks.ts';
import { importSkillMd } from '../skills/skill-import.ts';
import { parseSkillMd } from '../skills/skill-md.ts';
import { newVersion } from '../skills/skill-version.ts';

/** One labelled ask: the skill that should load first, or null when none should (an adjacent-but-different ask). */
export type LabelledAsk = { ask: string; expect: string | null };

export const DISCOVERY_DIR = new URL('../test/fixtures/discovery/', import.meta.url);

/** The fixture skills (folder name and SKILL.md text) and the labelled asks. */
export function loadDiscoverySet(): { skills: Array<{ folder: string; skillMd: string }>; asks: LabelledAsk[] } {
  const skillsDir = new URL('skills/', DISCOVERY_DIR);
  const skills = readdirSync(skillsDir)
    .sort()
    .map((folder) => ({ folder, skillMd: readFileSync(new URL(`${folder}/SKILL.md`, skillsDir), 'utf8') }));
  return { skills, asks: readAsks('asks.json') };
}

/**
 * The real-world corpus (`../shared/corpus/skills`, read in place): skills with a name and a description only, no
 * triggers or not_for, read leniently as an import is; and the tuning asks over them (corpus-asks.json and
 * tuning-asks.json: discovery was tuned on both).
 */
export function loadCorpusSet(): { skills: Array<{ folder: string; skillMd: string }>; asks: LabelledAsk[] } {
  const skills = corpusManifest().map((e) => ({
    folder: e.folder_name,
    skillMd: readFileSync(new URL(`${e.corpus_path}/SKILL.md`, CORPUS_DIR), 'utf8'),
  }));
  return { skills, asks: [...readAsks('corpus-asks.json'), ...readAsks('tuning-asks.json')] };
}

/** The held-out asks over the corpus, written apart and never used for tuning: only `bench/discovery.ts --held-out` reads them. */
export const loadHeldOutAsks = () => readAsks('held-out-asks.json');

/** A labelled set of test/fixtures/discovery: `{note, asks: [{ask, expect}]}`. */
function readAsks(file: string): LabelledAsk[] {
  const { asks } = JSON.parse(readFileSync(new URL(file, DISCOVERY_DIR), 'utf8')) as { asks: LabelledAsk[] };
  return asks.map(({ ask, expect }) => ({ ask, expect }));
}

/** Stores corpus skills as imports do (lenient reading), active, chunks embedded when a client is given. */
export async function storeImportedSkills(
  db: Kysely<Database>,
  owner: Owner,
  skills: Array<{ folder: string; skillMd: string }>,
  embeddings?: EmbeddingsClient,
) {
  for (const { folder, skillMd } of skills) {
    const read = importSkillMd(skillMd, { folder });
    if (!read.ok) throw new Error(`corpus ${folder}: ${JSON.stringify(read.errors)}`);
    const version = newVersion(skillMd, read.skill, [], read.warnings);
    await createSkill(db, owner, {
      ...version,
      chunks: await embedChunks(version.chunks, embeddings),
      source: 'imported',
      status: 'active',
    });
  }
}

/** Stores the fixture skills for one owner as authored, active skills (chunks embedded when a client is given). */
export async function storeDiscoverySkills(
  db: Kysely<Database>,
  owner: Owner,
  skills: Array<{ folder: string; skillMd: string }>,
  embeddings?: EmbeddingsClient,
) {
  for (const { folder, skillMd } of skills) {
    const parsed = parseSkillMd(skillMd, { folder });
    if (!parsed.ok) throw new Error(`fixture ${folder}: ${JSON.stringify(parsed.errors)}`);
    const version = newVersion(skillMd, parsed.skill);
    await createSkill(db, owner, {
      ...version,
      chunks: await embedChunks(version.chunks, embeddings),
      source: 'authored',
      status: 'active',
    });
  }
}

/** Discovery figures over the labelled asks, with every ask that went wrong. */
export type DiscoveryFigures = {
  /** Share of asks with an expected skill whose top-ranked skill is that one. */
  top1Accuracy: number;
  /** Share of asks that should load nothing for which some skill loaded. */
  falseLoadRate: number;
  /** Share of all asks answered right: the expected skill first, or nothing for an ask that should load nothing. */
  accuracy: number;
  hits: number;
  falseLoads: number;
  positives: number;
  negatives: number;
  mistakes: Array<{ ask: string; expected: string | null; got: string | null }>;
};

/** Each ask's chunk matches and embedding, fetched once so settings can be swept without asking the database again. */
export type MatchedAsk = LabelledAsk & { matches: ChunkMatch[]; embedding: number[] | undefined };

export async function matchAsks(deps: Omit<DiscoveryDeps, 'tuning'>, owner: Owner, asks: LabelledAsk[]): Promise<MatchedAsk[]> {
  const out: MatchedAsk[] = [];
  for (const a of asks) {
    const { matches, messageEmbedding } = await matchMessage(deps, owner, a.ask, true);
    out.push({ ...a, matches, embedding: messageEmbedding });
  }
  return out;
}

/** Top-1 accuracy and false loads of discovery (the same `proposeSkills` the API runs) over matched asks. */
export function scoreDiscovery(asks: MatchedAsk[], tuning: DiscoveryTuning, useEmbeddings = true): DiscoveryFigures {
  let hits = 0;
  let falseLoads = 0;
  const mistakes: DiscoveryFigures['mistakes'] = [];
  for (const { ask, expect, matches, embedding } of asks) {
    const { items } = proposeSkills(matches, ask, tuning, useEmbeddings ? embedding : undefined, 1);
    const got = items[0]?.name ?? null;
    if (expect !== null && got === expect) hits++;
    if (expect === null && got !== null) falseLoads++;
    if (got !== expect) mistakes.push({ ask, expected: expect, got });
  }
  const positives = asks.filter((a) => a.expect !== null).length;
  const negatives = asks.length - positives;
  return {
    top1Accuracy: hits / Math.max(positives, 1),
    falseLoadRate: falseLoads / Math.max(negatives, 1),
    accuracy: (asks.length - mistakes.length) / Math.max(asks.length, 1),
    hits,
    falseLoads,
    positives,
    negatives,
    mistakes,
  };
}

export async function evaluateDiscovery(deps: DiscoveryDeps, owner: Owner, asks: LabelledAsk[]): Promise<DiscoveryFigures> {
  return scoreDiscovery(await matchAsks(deps, owner, asks), deps.tuning);
}

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { matchTexts, type TextMatch } from '../db/text-relevance.ts';
import { loadAppRegistry } from '../tools/app-registry.ts';
import { rankByMatches, toolText } from '../tools/tool-ranking.ts';

/** One labelled objective: the tool it needs, and which half of the set it belongs to. */
export type LabelledObjective = { objective: string; needs: string; split: 'tune' | 'held_out' };

export const PRESELECTION_DIR = fileURLToPath(new URL('../test/fixtures/tool-preselection/', import.meta.url));

/** The fixture tools' names and match texts, and the labelled objectives. */
export async function loadPreselectionSet() {
  const registry = await loadAppRegistry(`${PRESELECTION_DIR}apps`);
  const tools = registry.listTools();
  const { objectives } = JSON.parse(readFileSync(`${PRESELECTION_DIR}objectives.json`, 'utf8')) as { objectives: LabelledObjective[] };
  for (const o of objectives) if (!registry.getTool(o.needs)) throw new Error(`objective needs ${o.needs}, which the fixture lacks`);
  return {
    names: tools.map((t) => t.qualifiedName),
    texts: tools.map((t) => toolText(t, registry.getApp(t.appId))),
    apps: registry.apps.length,
    objectives,
  };
}

/** Each objective's matches against every tool, measured once by Postgres (weights are then tried in process). */
export async function measureMatches(db: Kysely<Database>, texts: string[], objectives: LabelledObjective[]): Promise<TextMatch[][]> {
  const out: TextMatch[][] = [];
  for (const o of objectives) out.push(await matchTexts(db, o.objective, texts));
  return out;
}

/** How often the needed tool is kept when `limit` tools are, and the mean reciprocal rank of it. */
export type PreselectionFigures = { n: number; keptAt: Record<number, number>; top1: number; mrr: number; misses: string[] };

export function evaluatePreselection(
  names: string[],
  matches: TextMatch[][],
  objectives: LabelledObjective[],
  weight: number,
  limits: number[],
  missAt: number,
): PreselectionFigures {
  const positions = objectives.map((o, i) => rankByMatches(names, matches[i]!, weight).findIndex((r) => r.qualifiedName === o.needs) + 1);
  const share = (hit: (p: number) => boolean) => positions.filter(hit).length / Math.max(1, positions.length);
  return {
    n: objectives.length,
    keptAt: Object.fromEntries(limits.map((k) => [k, share((p) => p <= k)])),
    top1: share((p) => p === 1),
    mrr: positions.reduce((s, p) => s + 1 / p, 0) / Math.max(1, positions.length),
    misses: objectives.flatMap((o, i) =>
      positions[i]! > missAt ? [`${o.needs} at #${positions[i]}: ${JSON.stringify(o.objective)}`] : [],
    ),
  };
}

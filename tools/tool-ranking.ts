import type { Kysely } from 'kysely';
import { matchTexts, type TextMatch } from '../db/text-relevance.ts';
import type { Database } from '../db/schema.ts';
import type { AppDefinition, ToolDefinition } from './app-registry.ts';

/**
 * Weight of the full-text rank against trigram similarity in a tool's score, discovery's formula
 * (`w·r/(r+1) + (1−w)·trigram`). On the tune half of test/fixtures/tool-preselection every w from 0.5 to 0.9 ties
 * (kept@5 0.80, MRR 0.79) and 0.5 — discovery's own weight — is the first of them; `npm run bench:tools` prints both halves.
 */
export const TOOL_RANK_WEIGHT = 0.5;

/** What a tool is matched on: its app's name, its name in words, and its description. */
export const toolText = (tool: Pick<ToolDefinition, 'name' | 'description'>, app: Pick<AppDefinition, 'name'> | undefined): string =>
  `${app?.name ?? ''} ${tool.name.replaceAll('_', ' ')}. ${tool.description}`.trim();

export type RankedTool = { qualifiedName: string; score: number };

/** The tools ordered by relevance to the objective, best first; ties keep the order they were given in. */
export async function rankTools(
  db: Kysely<Database>,
  objective: string,
  tools: ReadonlyArray<{ tool: ToolDefinition; app: AppDefinition | undefined }>,
  weight = TOOL_RANK_WEIGHT,
): Promise<RankedTool[]> {
  const matches = await matchTexts(
    db,
    objective,
    tools.map((t) => toolText(t.tool, t.app)),
  );
  return rankByMatches(
    tools.map((t) => t.tool.qualifiedName),
    matches,
    weight,
  );
}

/** The ranking for matches already measured (one per name, same order): the bench tunes `weight` with it. */
export function rankByMatches(names: readonly string[], matches: readonly TextMatch[], weight = TOOL_RANK_WEIGHT): RankedTool[] {
  return names
    .map((qualifiedName, i) => {
      const m = matches[i] ?? { rank: 0, trigram: 0 };
      return { qualifiedName, score: weight * (m.rank / (m.rank + 1)) + (1 - weight) * m.trigram, i };
    })
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map(({ qualifiedName, score }) => ({ qualifiedName, score: Math.round(score * 1e4) / 1e4 }));
}

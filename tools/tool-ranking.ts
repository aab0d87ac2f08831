import type { Kysely } from 'kysely';
import { matchTexts } from '../db/text-relevance.ts';
import type { Database } from '../db/schema.ts';
import type { AppDefinition, ToolDefinition } from './app-registry.ts';

/**
 * Weight of the full-text rank against trigram similarity in a tool's score: discovery's formula
 * (`w·r/(r+1) + (1−w)·trigram`), with `w` chosen on the tuning half of test/fixtures/tool-preselection
 * (`npm run bench:tools` prints both halves).
 */
export const TOOL_RANK_WEIGHT = 0.7;

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
  return tools
    .map((t, i) => {
      const m = matches[i] ?? { rank: 0, trigram: 0 };
      return { qualifiedName: t.tool.qualifiedName, score: weight * (m.rank / (m.rank + 1)) + (1 - weight) * m.trigram, i };
    })
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map(({ qualifiedName, score }) => ({ qualifiedName, score: Math.round(score * 1e4) / 1e4 }));
}

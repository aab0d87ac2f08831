import { newestSavedMemories, type MemoryScope } from '../db/memory-search.ts';
import type { MemoryRow } from '../db/schema.ts';
import { fuseRankings, rankMemories, type RetrievalDeps } from './retrieve.ts';
import { selectDiverse } from './select-diverse.ts';

/** How many memories a context holds, and how many of them at most are missions' completion memories. */
export const CONTEXT_MEMORY_SHARES = { limit: 5, missions: 2 } as const;

/** What a context holds and why the rest was left out; stored with the mission and shown by `GET /missions/:id`. */
export type MemoryAccount = {
  /** The memories in scope (this workspace's and the user-wide ones). */
  total: number;
  shown: { saved: string[]; missions: string[] };
  leftOut: {
    /** Matched by no retriever (or not among the best candidates): not about the objective. */
    belowRelevance: number;
    /** Relevant, but the context's slots (or the missions' share) were full. */
    overBudget: number;
    /** Near-duplicates of a memory shown. */
    duplicates: number;
  };
};

/**
 * The memories a mission's context holds, in two kinds: the user's saved facts (source `user` or `tool`) and the
 * service's completion memories (`mission`). A completion memory repeats its objective, so it matches a similar ask
 * better than any fact the user saved; ranked together, it pushed relevant facts out. So the kinds are ranked apart
 * (the usual fusion, then maximal marginal relevance within each kind) and admitted in this order: relevant saved facts
 * (up to the whole limit), relevant completion memories (at most their share, in the slots left), then the user's
 * other saved facts, newest first, in any slot still free: a user's own facts are few and standing, and a retriever
 * can miss one ("units" is nowhere near "kilometres" for the word vectors), whereas a completion memory no retriever
 * matched is never shown. `exceptMission`'s own completion memories (a session's earlier exchanges, already in its
 * transcript) are never shown to it.
 */
export async function selectContextMemories(
  deps: RetrievalDeps,
  scope: MemoryScope,
  text: string,
  exceptMission?: string,
): Promise<{ saved: MemoryRow[]; missions: MemoryRow[]; account: MemoryAccount }> {
  const { limit, missions: missionShare } = CONTEXT_MEMORY_SHARES;
  const { rows, totals, newest, ...rankings } = await rankMemories(deps, scope, text, limit);
  const fused = fuseRankings(rankings, deps.tuning);
  const candidates = (mission: boolean) =>
    fused.flatMap((f) => {
      const row = rows.get(f.id);
      const shown = row && (row.source === 'mission') === mission && row.mission_id !== exceptMission;
      return shown ? [{ ...f, text: row.content }] : [];
    });
  const [savedCandidates, missionCandidates] = [candidates(false), candidates(true)];
  // Every non-duplicate, best first: what is cut after this is cut for want of room, not for redundancy.
  const savedRelevant = selectDiverse(savedCandidates, { limit: savedCandidates.length });
  const missionRelevant = selectDiverse(missionCandidates, { limit: missionCandidates.length });
  const saved = savedRelevant.slice(0, limit).map((c) => rows.get(c.id)!);
  const missions = missionRelevant.slice(0, Math.min(missionShare, limit - saved.length)).map((c) => rows.get(c.id)!);
  const free = limit - saved.length - missions.length;
  const except = savedCandidates.map((c) => c.id);
  const others =
    free > 0
      ? (newestFromRows(rows, { newest, asked: limit }, free, except) ?? (await newestSavedMemories(deps.db, scope, free, except)))
      : [];
  return {
    saved: [...saved, ...others],
    missions,
    account: {
      total: totals.saved + totals.missions,
      shown: { saved: [...saved, ...others].map((m) => m.id), missions: missions.map((m) => m.id) },
      leftOut: {
        belowRelevance: totals.saved - savedCandidates.length - others.length + (totals.missions - missionCandidates.length),
        overBudget: savedRelevant.length - saved.length + (missionRelevant.length - missions.length),
        duplicates: savedCandidates.length - savedRelevant.length + (missionCandidates.length - missionRelevant.length),
      },
    },
  };
}

/**
 * The scope's newest `free` saved facts not in `except`, from the rows retrieval already has: those the rankings named
 * and the `asked` newest they did not (`newest`, newest first). Every saved fact missing from `rows` is older than the
 * last of `newest` when `newest` is full (else none is missing), so the answer is proved when the facts taken are as
 * new as that one; undefined otherwise, and the caller reads them. Retrieval's own statement names every fact of
 * `except` unless the vector index ranked apart (a scope past EXACT_UP_TO), so the read is that case's alone.
 */
function newestFromRows(
  rows: Map<string, MemoryRow>,
  { newest, asked }: { newest: string[]; asked: number },
  free: number,
  except: string[],
): MemoryRow[] | undefined {
  const skip = new Set(except);
  const seq = (r: MemoryRow) => BigInt(String(r.seq));
  const taken = [...rows.values()]
    .filter((r) => r.source !== 'mission' && !skip.has(r.id))
    .sort((a, b) => (seq(b) > seq(a) ? 1 : seq(b) < seq(a) ? -1 : 0))
    .slice(0, free);
  const oldest = newest.length < asked ? undefined : rows.get(newest.at(-1)!);
  if (!oldest) return newest.length < asked ? taken : undefined;
  const proved = taken.length === free && taken.every((r) => seq(r) >= seq(oldest));
  return proved ? taken : undefined;
}

/** The account as one line of the context: "3 of 7 memories shown (saved 2, missions 1); left out: 4 below relevance." */
export function describeAccount(a: MemoryAccount): string {
  const saved = a.shown.saved.length;
  const missions = a.shown.missions.length;
  const head = `${saved + missions} of ${a.total} memories shown (saved ${saved}, missions ${missions})`;
  const parts = [
    a.leftOut.belowRelevance ? `${a.leftOut.belowRelevance} below relevance` : '',
    a.leftOut.overBudget ? `${a.leftOut.overBudget} over the budget` : '',
    a.leftOut.duplicates ? `${a.leftOut.duplicates} near-duplicate${a.leftOut.duplicates > 1 ? 's' : ''}` : '',
  ].filter(Boolean);
  return parts.length ? `${head}; left out: ${parts.join(', ')}.` : `${head}.`;
}

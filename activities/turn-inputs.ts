import type { Kysely } from 'kysely';
import { readObjective, readTurnInputs, type ToolOutputRow } from '../db/transcript.ts';
import type { Database } from '../db/schema.ts';
import type { ModelTurnInput } from '../contracts/mission.ts';
import type { ChatMessage } from '../model/model-types.ts';
import type { CachedConversation, TranscriptCache } from './transcript-cache.ts';

/** What a model call builds its prompt from: the conversation before its turn, the previous turn's tool outputs, the objective on turn 1. */
export type TurnInputs = { conversation: CachedConversation; outputs: ToolOutputRow[]; objective?: ChatMessage };

/**
 * A model call's inputs for the conversation before position `beforeSeq`: from this worker's memory when every piece
 * is there under the stamp the workflow passed (no round trip), else from Postgres (one; turn 1's objective one more).
 */
export async function readTurn(
  db: Kysely<Database>,
  cache: TranscriptCache,
  input: Pick<ModelTurnInput, 'missionId' | 'turn' | 'previous' | 'transcript'>,
  beforeSeq: number,
): Promise<TurnInputs> {
  const remembered = fromMemory(cache, input, beforeSeq);
  if (remembered) return remembered;
  const hasResults = input.previous.length > 0;
  const [{ messages, outputs, compaction }, objective] = await Promise.all([
    readTurnInputs(
      db,
      input.missionId,
      beforeSeq,
      hasResults ? { turn: input.turn - 1, toolUseIds: input.previous.map((o) => o.toolUseId) } : undefined,
    ),
    // Turn 1's opening message takes the place of the objective (position 0), keeping its first block.
    beforeSeq === 0 ? readObjective(db, input.missionId) : undefined,
  ]);
  return {
    conversation: { messages, nextSeq: beforeSeq, ...(compaction ? { compaction } : {}) },
    outputs,
    ...(objective ? { objective } : {}),
  };
}

function fromMemory(
  cache: TranscriptCache,
  { missionId, turn, previous, transcript }: Pick<ModelTurnInput, 'missionId' | 'turn' | 'previous' | 'transcript'>,
  beforeSeq: number,
): TurnInputs | undefined {
  const kept = cache.conversation(missionId, transcript);
  if (!kept) return undefined;
  let conversation = kept;
  let objective: ChatMessage | undefined;
  if (beforeSeq === 0 && kept.nextSeq === 1 && !kept.compaction) {
    // Turn 1 opening with a person's message: the objective as prepareMission stored it, and nothing before it.
    objective = kept.messages[0];
    conversation = { messages: [], nextSeq: 0 };
  } else if (kept.nextSeq !== beforeSeq) return undefined;
  const outputs: ToolOutputRow[] = [];
  for (const o of previous) {
    // A cancelled call's result is the same words whatever was stored; every other one needs its stored output, and
    // only the one its own activity stored (stamped) can be in memory.
    if (o.status === 'cancelled') continue;
    const row = cache.output(missionId, turn - 1, o.toolUseId, o.stamp);
    if (!row) return undefined;
    outputs.push(row);
  }
  return { conversation, outputs, ...(objective ? { objective } : {}) };
}

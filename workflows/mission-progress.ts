import type { EventsPage, MissionEvent, MissionEventBody, MissionResult, MissionState, MissionStatus, ToolStatus } from './definitions.ts';

/** The mission's event log and live state, kept in workflow memory and served by queries (no history cost). */
export type MissionProgress = ReturnType<typeof createMissionProgress>;

export function createMissionProgress() {
  const events: MissionEvent[] = [];
  const state: MissionState = { status: 'running', turn: 0, tools: [] };

  function emit(body: MissionEventBody): void {
    // Workflow time (Date is deterministic inside the sandbox), so replays rebuild the same log.
    events.push({ ...body, seq: events.length + 1, at: new Date().toISOString() } as MissionEvent);
  }

  return {
    emit,
    turn(turn: number): void {
      state.turn = turn;
      emit({ type: 'turn', turn });
    },
    toolStarted(toolUseId: string, name: string, turn: number): void {
      state.tools.push({ toolUseId, name, status: 'running' });
      emit({ type: 'tool_start', toolUseId, tool: name, turn });
    },
    toolEnded(toolUseId: string, status: Exclude<ToolStatus, 'running'>, durationMs: number, error?: string): void {
      // The latest call with this id: some servers reuse tool-call ids across turns.
      const tool = state.tools.findLast((t) => t.toolUseId === toolUseId);
      if (!tool) return;
      tool.status = status;
      tool.durationMs = durationMs;
      emit({ type: 'tool_end', toolUseId, tool: tool.name, status, durationMs, ...(error ? { error } : {}) });
    },
    finish(
      status: Exclude<MissionStatus, 'running'>,
      outcome: { result?: MissionResult; error?: { phase: string; message: string } },
    ): void {
      state.status = status;
      if (outcome.result) state.result = outcome.result;
      if (outcome.error) {
        state.error = outcome.error;
        emit({ type: 'error', phase: outcome.error.phase, message: outcome.error.message });
      }
      emit({ type: 'status', status });
    },
    page(afterSeq: number): EventsPage {
      return { events: events.slice(Math.max(0, afterSeq)), done: state.status !== 'running' };
    },
    state: (): MissionState => state,
  };
}

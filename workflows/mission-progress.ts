import type {
  EventsPage,
  MissionEvent,
  MissionEventBody,
  MissionResult,
  MissionState,
  MissionStatus,
  ToolCallEnd,
  ToolStatus,
} from './definitions.ts';

type ToolEndStatus = Exclude<ToolStatus, 'running'>;

/** The mission's event log and live state, kept in workflow memory and served by queries (no history cost). */
export type MissionProgress = ReturnType<typeof createMissionProgress>;

/** `onEmit` runs after each event is logged (the workflow wakes the API's relay through a sink). */
export function createMissionProgress(onEmit: () => void = () => {}) {
  const events: MissionEvent[] = [];
  const state: MissionState = { status: 'running', turn: 0, tools: [] };
  // Beside each entry of state.tools (same index): what the state does not show.
  const calls: Array<{ turn: number; startedAt: number }> = [];

  function emit(body: MissionEventBody): void {
    // Workflow time (Date is deterministic inside the sandbox), so replays rebuild the same log.
    events.push({ ...body, seq: events.length + 1, at: new Date().toISOString() } as MissionEvent);
    onEmit();
  }

  function end(i: number, status: ToolEndStatus, error?: string): ToolCallEnd | undefined {
    const tool = state.tools[i]!;
    if (tool.status !== 'running') return undefined;
    const durationMs = Date.now() - calls[i]!.startedAt;
    tool.status = status;
    tool.durationMs = durationMs;
    emit({ type: 'tool_end', toolUseId: tool.toolUseId, tool: tool.name, status, durationMs, ...(error ? { error } : {}) });
    return { toolUseId: tool.toolUseId, tool: tool.name, turn: calls[i]!.turn, status, durationMs, ...(error ? { error } : {}) };
  }

  return {
    emit,
    turn(turn: number): void {
      state.turn = turn;
      emit({ type: 'turn', turn });
    },
    toolStarted(toolUseId: string, name: string, turn: number): void {
      state.tools.push({ toolUseId, name, status: 'running' });
      calls.push({ turn, startedAt: Date.now() });
      emit({ type: 'tool_start', toolUseId, tool: name, turn });
    },
    /** The latest call with this id (some servers reuse tool-call ids across turns), if any. */
    toolStatus: (toolUseId: string): ToolStatus | undefined => state.tools.findLast((t) => t.toolUseId === toolUseId)?.status,
    /** Ends the latest call with this id once: a second end of the same call changes nothing and emits nothing. */
    toolEnded(toolUseId: string, status: ToolEndStatus, error?: string): ToolCallEnd | undefined {
      const i = state.tools.findLastIndex((t) => t.toolUseId === toolUseId);
      return i >= 0 ? end(i, status, error) : undefined;
    },
    /** Ends every call still running (the mission is ending), before the terminal event. */
    endRunningTools(status: ToolEndStatus, error?: string): ToolCallEnd[] {
      return state.tools.flatMap((t, i) => (t.status === 'running' ? [end(i, status, error)!] : []));
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

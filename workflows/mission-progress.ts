import type {
  ApprovalOutcome,
  EventsPage,
  MissionEvent,
  MissionEventBody,
  MissionResult,
  MissionState,
  MissionStatus,
  ToolCallEnd,
  ToolEndStatus,
  ToolStatus,
} from './definitions.ts';

/** Not ended yet: running, or waiting for a person's approval. */
const isOpen = (status: ToolStatus) => status === 'running' || status === 'awaiting_approval';

/** The mission's event log and live state, kept in workflow memory and served by queries (no history cost). */
export type MissionProgress = ReturnType<typeof createMissionProgress>;

export function createMissionProgress() {
  const events: MissionEvent[] = [];
  const state: MissionState = { status: 'running', turn: 0, tools: [] };
  // Beside each entry of state.tools (same index): what the state does not show.
  const calls: Array<{ turn: number; startedAt: number }> = [];

  function emit(body: MissionEventBody): void {
    // Workflow time (Date is deterministic inside the sandbox), so replays rebuild the same log.
    events.push({ ...body, seq: events.length + 1, at: new Date().toISOString() } as MissionEvent);
  }

  function end(i: number, status: ToolEndStatus, error?: string): ToolCallEnd | undefined {
    const tool = state.tools[i]!;
    if (!isOpen(tool.status)) return undefined;
    const durationMs = Date.now() - calls[i]!.startedAt;
    tool.status = status;
    tool.durationMs = durationMs;
    emit({ type: 'tool_end', toolUseId: tool.toolUseId, tool: tool.name, status, durationMs, ...(error ? { error } : {}) });
    return { toolUseId: tool.toolUseId, tool: tool.name, turn: calls[i]!.turn, status, durationMs, ...(error ? { error } : {}) };
  }

  return {
    emit,
    /** The mission waits for a slot (a running-mission limit): `queued` until `admitted`. */
    queued(): void {
      state.status = 'queued';
      emit({ type: 'status', status: 'queued' });
    },
    admitted(body: Extract<MissionEventBody, { type: 'status' }>): void {
      state.status = 'running';
      emit(body);
    },
    turn(turn: number): void {
      state.turn = turn;
      emit({ type: 'turn', turn });
    },
    toolStarted(toolUseId: string, name: string, turn: number): void {
      state.tools.push({ toolUseId, name, status: 'running' });
      calls.push({ turn, startedAt: Date.now() });
      emit({ type: 'tool_start', toolUseId, tool: name, turn });
    },
    /** A call that needs approval: listed as `awaiting_approval`; its `tool_start` waits for the approval. */
    approvalRequested(toolUseId: string, name: string, turn: number, input: Record<string, unknown>, expiresAt: string): void {
      state.tools.push({ toolUseId, name, status: 'awaiting_approval' });
      calls.push({ turn, startedAt: Date.now() });
      emit({ type: 'approval_requested', toolUseId, tool: name, turn, input, expiresAt });
    },
    /** The wait is over; an approved call starts now (its duration counts from here, not from the request). */
    approvalDecided(toolUseId: string, decided: { decision: ApprovalOutcome; waitedMs: number; reason?: string; edited?: boolean }): void {
      const i = state.tools.findLastIndex((t) => t.toolUseId === toolUseId);
      const tool = state.tools[i]!;
      emit({ type: 'approval_decided', toolUseId, tool: tool.name, ...decided });
      if (decided.decision !== 'approved') return;
      tool.status = 'running';
      calls[i]!.startedAt = Date.now();
      emit({ type: 'tool_start', toolUseId, tool: tool.name, turn: calls[i]!.turn });
    },
    /** The latest call with this id (some servers reuse tool-call ids across turns), if any. */
    toolStatus: (toolUseId: string): ToolStatus | undefined => state.tools.findLast((t) => t.toolUseId === toolUseId)?.status,
    /** Ends the latest call with this id once: a second end of the same call changes nothing and emits nothing. */
    toolEnded(toolUseId: string, status: ToolEndStatus, error?: string): ToolCallEnd | undefined {
      const i = state.tools.findLastIndex((t) => t.toolUseId === toolUseId);
      return i >= 0 ? end(i, status, error) : undefined;
    },
    /** Ends every call still running or awaiting approval (the mission is ending), before the terminal event. */
    endRunningTools(status: ToolEndStatus, error?: string): ToolCallEnd[] {
      return state.tools.flatMap((t, i) => (isOpen(t.status) ? [end(i, status, error)!] : []));
    },
    finish(
      status: Exclude<MissionStatus, 'running' | 'queued'>,
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
      return { events: events.slice(Math.max(0, afterSeq)), done: state.status !== 'running' && state.status !== 'queued' };
    },
    state: (): MissionState => state,
  };
}

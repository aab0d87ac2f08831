import { embedStatusOf, type EmbedSummary } from '../contracts/embeds.ts';
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

/**
 * `onEmit` runs after events are logged, with them (the workflow wakes the API's relay through a sink); `ended` when
 * they are the mission's final events.
 */
export function createMissionProgress(onEmit: (logged: readonly MissionEvent[], ended: boolean) => void = () => {}) {
  const events: MissionEvent[] = [];
  const state: MissionState = { status: 'running', turn: 0, tools: [] };
  // Beside each entry of state.tools (same index): what the state does not show.
  const calls: Array<{ turn: number; startedAt: number }> = [];

  function emit(body: MissionEventBody): void {
    // Workflow time (Date is deterministic inside the sandbox), so replays rebuild the same log.
    const event = { ...body, seq: events.length + 1, at: new Date().toISOString() } as MissionEvent;
    events.push(event);
    onEmit([event], false);
  }

  function end(i: number, status: ToolEndStatus, error?: string, summary?: EmbedSummary): ToolCallEnd | undefined {
    const tool = state.tools[i]!;
    if (!isOpen(tool.status)) return undefined;
    const durationMs = Date.now() - calls[i]!.startedAt;
    tool.status = status;
    tool.durationMs = durationMs;
    const { toolUseId, name, embedId } = tool;
    emit({ type: 'tool_end', toolUseId, tool: name, status, durationMs, ...(error ? { error } : {}) });
    if (embedId)
      emit({
        type: 'embed',
        embedId,
        toolUseId,
        tool: name,
        status: embedStatusOf(status),
        ...(summary ? { summary } : {}),
      });
    return {
      toolUseId,
      tool: name,
      turn: calls[i]!.turn,
      status,
      durationMs,
      ...(error ? { error } : {}),
      ...(embedId ? { embedId } : {}),
    };
  }
  /**
   * The events that close the mission (its error, if any, then the terminal status), numbered as the next ones and
   * stamped now, without logging them: the activity that records the end stores them, then `finish` logs them.
   */
  function finalEvents(status: Exclude<MissionStatus, 'running' | 'queued'>, error?: { phase: string; message: string }): MissionEvent[] {
    const at = new Date().toISOString();
    const bodies: MissionEventBody[] = [...(error ? [{ type: 'error', ...error } as const] : []), { type: 'status', status }];
    return bodies.map((body, i) => ({ ...body, seq: events.length + 1 + i, at }) as MissionEvent);
  }

  /** The latest call named by this tool-use id or embed id. */
  const indexOf = (id: string) => state.tools.findLastIndex((t) => t.toolUseId === id || t.embedId === id);

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
    /** A call starts; with an embed id (runs since patch `tool-embeds`), its embed starts as `processing`. */
    toolStarted(toolUseId: string, name: string, turn: number, embedId?: string): void {
      state.tools.push({ toolUseId, name, status: 'running', ...(embedId ? { embedId } : {}) });
      calls.push({ turn, startedAt: Date.now() });
      emit({ type: 'tool_start', toolUseId, tool: name, turn });
      if (embedId) emit({ type: 'embed', embedId, toolUseId, tool: name, status: 'processing' });
    },
    /** A call that needs approval: listed as `awaiting_approval`; its `tool_start` (and embed) wait for the approval. */
    approvalRequested(
      toolUseId: string,
      name: string,
      turn: number,
      input: Record<string, unknown>,
      expiresAt: string,
      embedId?: string,
    ): void {
      state.tools.push({ toolUseId, name, status: 'awaiting_approval', ...(embedId ? { embedId } : {}) });
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
      if (tool.embedId) emit({ type: 'embed', embedId: tool.embedId, toolUseId, tool: tool.name, status: 'processing' });
    },
    /** The latest call with this tool-use id (some servers reuse them across turns) or embed id, if any. */
    toolStatus: (id: string): ToolStatus | undefined => state.tools[indexOf(id)]?.status,
    /** The tool-use id of the latest call with this tool-use id or embed id. */
    toolUseIdOf: (id: string): string | undefined => state.tools[indexOf(id)]?.toolUseId,
    embedIdOf: (id: string): string | undefined => state.tools[indexOf(id)]?.embedId,
    /** Ends the latest call with this id once: a second end of the same call changes nothing and emits nothing. */
    toolEnded(toolUseId: string, status: ToolEndStatus, error?: string, summary?: EmbedSummary): ToolCallEnd | undefined {
      const i = state.tools.findLastIndex((t) => t.toolUseId === toolUseId);
      return i >= 0 ? end(i, status, error, summary) : undefined;
    },
    /** Ends every call still running or awaiting approval (the mission is ending), before the terminal event. */
    endRunningTools(status: ToolEndStatus, error?: string): ToolCallEnd[] {
      return state.tools.flatMap((t, i) => (isOpen(t.status) ? [end(i, status, error)!] : []));
    },
    finalEvents,
    /**
     * The mission's end: the state, then the final events `finalEvents` made (as stored; renumbered if an event was
     * logged since they were made, which the relay sees as a mismatch and reads the log instead).
     */
    finish(
      status: Exclude<MissionStatus, 'running' | 'queued'>,
      outcome: { result?: MissionResult; error?: { phase: string; message: string } },
      final: MissionEvent[],
    ): void {
      state.status = status;
      if (outcome.result) state.result = outcome.result;
      if (outcome.error) state.error = outcome.error;
      const logged = final.map((e, i) => ({ ...e, seq: events.length + 1 + i }));
      events.push(...logged);
      onEmit(logged, true);
    },
    page(afterSeq: number): EventsPage {
      return { events: events.slice(Math.max(0, afterSeq)), done: state.status !== 'running' && state.status !== 'queued' };
    },
    state: (): MissionState => state,
  };
}

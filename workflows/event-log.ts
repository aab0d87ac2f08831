import { upsertSearchAttributes } from '@temporalio/workflow';
import { AWAITING_APPROVAL, type ApprovalOutcome } from '../contracts/approvals.ts';
import { embedStatusOf, type EmbedSummary } from '../contracts/embeds.ts';
import type { EventsPage, MissionEvent, MissionEventBody } from '../contracts/events.ts';
import {
  StatusSearchAttribute,
  type MissionEndStatus,
  type MissionError,
  type MissionResult,
  type MissionState,
  type MissionStatus,
  type ToolCallEnd,
  type ToolEndStatus,
  type ToolStatus,
} from '../contracts/mission.ts';

/** Not ended yet: running, or waiting for a person's approval. */
const isOpen = (status: ToolStatus) => status === 'running' || status === 'awaiting_approval';

/** The mission's event log and live state, kept in workflow memory and served by queries (no history cost). */
export type EventLog = ReturnType<typeof createEventLog>;

/** What the CadenzaStatus search attribute shows: the mission's status, or that a call waits for a person. */
export type ShownStatus = MissionStatus | typeof AWAITING_APPROVAL;

/**
 * `initial` is the status the mission was started with (the starter set the search attribute to it). `onEmit` runs
 * after events are logged, with them (the workflow wakes the API's relay through a sink); `ended` when they are the
 * mission's final events. `before`: a session's later run goes on after the events (stored) and turns of the runs before.
 */
export function createEventLog(
  initial: MissionStatus,
  onEmit: (logged: readonly MissionEvent[], ended: boolean) => void = () => {},
  before: { upTo: number; turn: number; exchanges: number } = { upTo: 0, turn: 0, exchanges: 0 },
) {
  const events: MissionEvent[] = [];
  // The seq of the last event before this run's first: they are in Postgres, not in this run's memory.
  const offset = before.upTo;
  const state: MissionState = {
    status: initial,
    turn: before.turn,
    tools: [],
    ...(before.exchanges > 0 ? { exchanges: [], exchangesBefore: before.exchanges } : {}),
  };
  let shown: ShownStatus = initial;

  /**
   * The one place a mission's status changes: the state the query serves and the CadenzaStatus search attribute,
   * upserted only when what it shows changes. A call awaiting approval shows in the attribute; the state stays running.
   */
  function setStatus(status: ShownStatus): void {
    state.status = status === AWAITING_APPROVAL ? 'running' : status;
    if (status === shown) return;
    shown = status;
    upsertSearchAttributes([{ key: StatusSearchAttribute, value: status }]);
  }
  // Beside each entry of state.tools (same index): what the state does not show.
  const calls: Array<{ turn: number; startedAt: number }> = [];

  function emit(body: MissionEventBody): void {
    // Workflow time (Date is deterministic inside the sandbox), so replays rebuild the same log.
    const event = { ...body, seq: offset + events.length + 1, at: new Date().toISOString() } as MissionEvent;
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
    emit({ type: 'embed', embedId, toolUseId, tool: name, status: embedStatusOf(status), ...(summary ? { summary } : {}) });
    return { toolUseId, tool: name, turn: calls[i]!.turn, status, durationMs, ...(error ? { error } : {}), embedId };
  }
  /**
   * The events that close the mission (its error, if any, then the terminal status), numbered as the next ones and
   * stamped now, without logging them: the activity that records the end stores them, then `finish` logs them.
   */
  function finalEvents(status: MissionEndStatus, error?: MissionError): MissionEvent[] {
    const at = new Date().toISOString();
    const bodies: MissionEventBody[] = [...(error ? [{ type: 'error', ...error } as const] : []), { type: 'status', status }];
    return bodies.map((body, i) => ({ ...body, seq: offset + events.length + 1 + i, at }) as MissionEvent);
  }

  /** The latest call named by this tool-use id or embed id. */
  const indexOf = (id: string) => state.tools.findLastIndex((t) => t.toolUseId === id || t.embedId === id);

  return {
    emit,
    setStatus,
    /** The status changes and the log says so (`queued`, then `running` once admitted; a retry's first says where it resumed). */
    statusChanged(body: Extract<MissionEventBody, { type: 'status' }>): void {
      setStatus(body.status);
      emit(body);
    },
    turn(turn: number): void {
      state.turn = turn;
      emit({ type: 'turn', turn });
    },
    /** A call starts; its embed (absent for a call of an unknown tool) starts as `processing`. */
    toolStarted(toolUseId: string, name: string, turn: number, embedId: string): void {
      state.tools.push({ toolUseId, name, status: 'running', embedId });
      calls.push({ turn, startedAt: Date.now() });
      emit({ type: 'tool_start', toolUseId, tool: name, turn });
      emit({ type: 'embed', embedId, toolUseId, tool: name, status: 'processing' });
    },
    /** A call that needs approval: listed as `awaiting_approval`; its `tool_start` (and embed) wait for the approval. */
    approvalRequested(
      toolUseId: string,
      name: string,
      turn: number,
      input: Record<string, unknown>,
      expiresAt: string,
      embedId: string,
    ): void {
      state.tools.push({ toolUseId, name, status: 'awaiting_approval', embedId });
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
      emit({ type: 'embed', embedId: tool.embedId, toolUseId, tool: tool.name, status: 'processing' });
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
    /** A session's exchange answered: its result is the mission's latest and joins the exchanges (the status follows). */
    exchangeEnded(result: MissionResult): void {
      state.result = result;
      state.exchanges = [...(state.exchanges ?? []), result];
    },
    /**
     * The mission's end: the state, then the final events `finalEvents` made (as stored; renumbered if an event was
     * logged since they were made, which the relay sees as a mismatch and reads the log instead).
     */
    finish(status: MissionEndStatus, outcome: { result?: MissionResult; error?: MissionError }, final: MissionEvent[]): void {
      setStatus(status);
      if (outcome.result) state.result = outcome.result;
      if (outcome.error) state.error = outcome.error;
      const logged = final.map((e, i) => ({ ...e, seq: offset + events.length + 1 + i }));
      events.push(...logged);
      onEmit(logged, true);
    },
    page(afterSeq: number): EventsPage {
      const open = ['running', 'queued', 'idle', 'paused'].includes(state.status);
      return { events: events.slice(Math.max(0, afterSeq - offset)), done: !open, ...(offset > 0 ? { storedUpTo: offset } : {}) };
    },
    /** The events this run logged (what it stores before it continues as new). */
    logged: (): MissionEvent[] => [...events],
    state: (): MissionState => state,
  };
}

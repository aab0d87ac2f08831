import type { EvalRunEvent, EvalRunEventBody, EvalRunStatus } from '../contracts/evals.ts';
import type { EventsPage } from '../contracts/events.ts';
import { hold } from './events-cursor.ts';

/**
 * An eval run's event log, kept like a mission's (workflows/event-log.ts): in workflow memory, rebuilt by replay, served
 * by the events query, each event handed to the worker (the activation's one progress sink call) so it wakes the API's relay. No activity claims
 * these events (nothing pushes them): each goes as a wake-up and the relay reads the query. The log is complete once
 * the run's status is no longer `running`.
 */
export function createEvalRunLog() {
  const events: EvalRunEvent[] = [];
  let status: EvalRunStatus = 'running';

  function emit(body: EvalRunEventBody): void {
    const event = { ...body, seq: events.length + 1, at: new Date().toISOString() } as EvalRunEvent;
    events.push(event);
    // No events cursor: its digest only matters to a push. Not `ended`: no row stores these events, the query serves them.
    hold(event, '');
  }

  return {
    emit,
    /** The run's status changes; a terminal one is the log's last event. */
    statusChanged(next: EvalRunStatus): void {
      status = next;
      emit({ type: 'run_status', status: next });
    },
    page: (afterSeq: number): EventsPage<EvalRunEvent> => ({ events: events.slice(Math.max(0, afterSeq)), done: status !== 'running' }),
  };
}

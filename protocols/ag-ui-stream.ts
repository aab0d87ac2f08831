import { EventType, type BaseEvent } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import type { Request, Response } from 'express';
import { getMission } from '../db/missions.ts';
import { readToolUseInput } from '../db/transcript.ts';
import type { EmbedRow, MissionRow } from '../db/schema.ts';
import type { ApiDeps } from '../server/deps.ts';
import { missionDetail } from '../server/mission-view.ts';
import { agUiTranslator, type RunEnd } from './ag-ui-events.ts';
import { stateSnapshot } from './ag-ui-state.ts';

export type AgUiRun = {
  row: MissionRow;
  threadId: string;
  runId: string;
  sentMessageId: string | undefined;
  fresh: boolean;
  /** The thread's embeds stored when the run was asked for, and the client's state: the run's first STATE_SNAPSHOT. */
  embeds: readonly EmbedRow[];
  clientState: unknown;
};

/**
 * Streams one run's AG-UI events over SSE from the mission's event stream (the relay, as the native SSE route reads
 * it) until the exchange answers (RUN_FINISHED) or fails (RUN_ERROR). After the AG-UI events of each durable event an
 * `id:` line names its seq, so a client that re-sends the run with `Last-Event-ID` resumes after it (the AG-UI SSE
 * parser reads `data:` lines only and skips the rest, as it skips the keep-alive comments).
 */
export function streamRun(deps: ApiDeps, req: Request, res: Response, run: AgUiRun, keepAliveMs = 15_000): void {
  const resumeFrom = Number.parseInt(String(req.get('last-event-id') ?? '0'), 10);
  const resumed = Number.isFinite(resumeFrom) && resumeFrom > 0;
  const encoder = new EventEncoder();
  res
    .status(200)
    .set({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' });
  res.flushHeaders();
  const send = (e: BaseEvent) => void res.write(encoder.encodeSSE(e));
  const ids = { threadId: run.threadId, runId: run.runId };
  send({ type: EventType.RUN_STARTED, ...ids } as BaseEvent);
  send(stateSnapshot(run.embeds, run.clientState));
  // A resumed stream starts inside its run: the events after Last-Event-ID are this run's.
  const translator = agUiTranslator({ runId: run.runId, sentMessageId: resumed ? undefined : run.sentMessageId, send });
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), keepAliveMs);
  let ended = false;
  let unsubscribe = () => {};
  const stop = () => {
    ended = true;
    clearInterval(keepAlive);
    unsubscribe();
  };
  const finish = async (end: RunEnd) => {
    stop();
    translator.closeText();
    try {
      if (end.status === 'failed') send({ type: EventType.RUN_ERROR, message: end.message, code: end.code } as BaseEvent);
      else await answer(deps, run, translator.streamed(), send);
    } catch {
      send({
        type: EventType.RUN_ERROR,
        message: 'the mission’s answer could not be read: see GET /api/v1/missions/:id',
        code: 'unavailable',
      } as BaseEvent);
    }
    res.end();
  };
  // One queue for durable and live events and the end: a tool call's input is read from the transcript before its events go out,
  // and nothing may overtake it.
  let queue = Promise.resolve();
  const inOrder = (step: () => Promise<void> | void) => {
    queue = queue.then(step).catch(() => {});
  };
  const subscription = deps.relay.subscribe(run.row.id, {
    afterSeq: resumed ? resumeFrom : 0,
    fresh: run.fresh,
    onEvent: (e) =>
      inOrder(async () => {
        if (ended) return;
        // The model's input for the call, stored with its reply before the call started (absent: no ARGS event).
        const args =
          e.type === 'tool_start' ? await readToolUseInput(deps.db, run.row.id, e.turn, e.toolUseId).catch(() => undefined) : undefined;
        if (ended) return;
        const end = translator.onEvent(e, args);
        res.write(`id: ${e.seq}\n\n`);
        if (end) void finish(end);
      }),
    onLive: (e) => inOrder(() => void (ended || translator.onLive(e))),
    onEnd: (reason) =>
      inOrder(() => {
        if (!ended)
          void finish({
            status: 'failed',
            message: reason === 'not_found' ? 'mission workflow not found' : 'the mission ended',
            code: reason,
          });
      }),
  });
  unsubscribe = subscription;
  // Events already at hand ended the run while subscribing: the subscription goes now.
  if (ended) subscription();
  // A client that drops its stream leaves the mission running: only the subscription goes.
  req.on('close', stop);
}

/** RUN_FINISHED with the exchange's answer; sent whole as one text message when none of it streamed. */
async function answer(deps: ApiDeps, run: AgUiRun, streamed: boolean, send: (e: BaseEvent) => void): Promise<void> {
  const detail = await missionDetail(deps, await getMission(deps.db, run.row.id));
  const text = detail.result?.text ?? '';
  if (!streamed && text) {
    const messageId = `${run.runId}/answer`;
    send({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' } as BaseEvent);
    send({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: text } as BaseEvent);
    send({ type: EventType.TEXT_MESSAGE_END, messageId } as BaseEvent);
  }
  send({
    type: EventType.RUN_FINISHED,
    threadId: run.threadId,
    runId: run.runId,
    result: { missionId: run.row.id, status: detail.status, text },
  } as BaseEvent);
}

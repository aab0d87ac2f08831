import type { Request, Response } from 'express';
import type { LiveEvent, LogEvent } from '../contracts/events.ts';
import type { EventRelay } from './relay.ts';

/**
 * Streams a mission's events (or an eval run's: `mission.id` is then its stream id, events/stream-ids.ts) as Server-Sent Events: `id:` is the event's seq so `Last-Event-ID` resumes with
 * neither gap nor duplicate; live events (`text_delta`, `reset`, `tool_progress`) come between them as they happen;
 * comment lines keep idle connections open; the stream ends after the terminal event.
 */
export function streamMissionEvents(
  req: Request,
  res: Response,
  relay: EventRelay,
  mission: { id: string; fresh: boolean },
  keepAliveMs = 15_000,
): void {
  const resumeFrom = Number.parseInt(String(req.get('last-event-id') ?? req.query.lastEventId ?? '0'), 10);
  res.status(200).set({
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  res.write(': connected\n\n');
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), keepAliveMs);
  const close = () => {
    clearInterval(keepAlive);
    unsubscribe();
    res.end();
  };
  const unsubscribe = relay.subscribe<LogEvent>(mission.id, {
    afterSeq: Number.isFinite(resumeFrom) && resumeFrom > 0 ? resumeFrom : 0,
    fresh: mission.fresh,
    onEvent: (e: LogEvent) => {
      const { seq, type, ...data } = e;
      res.write(`id: ${seq}\nevent: ${type}\ndata: ${JSON.stringify({ seq, type, ...data })}\n\n`);
    },
    // No `id:` line: a live event is not replayed, and a resumed stream goes on from the last seq.
    onLive: (e: LiveEvent) => void res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`),
    onEnd: (reason) => {
      if (reason === 'not_found') res.write(`event: error\ndata: ${JSON.stringify({ message: 'mission workflow not found' })}\n\n`);
      close();
    },
  });
  req.on('close', () => {
    clearInterval(keepAlive);
    unsubscribe();
  });
}

import { trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import type { Logger } from '../lib/logger.ts';
import { capturePattern } from './route-pattern.ts';

/**
 * Logs each request once it is answered (or its connection closes, for an SSE stream): method, route pattern (not
 * the URL with its ids and query), status, duration, request id and, with tracing on, the trace id. Never a body, a
 * header or a key.
 */
export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const route = capturePattern(req);
    // The request's SERVER span is active here when tracing is on (trace-requests.ts runs first).
    const traceId = trace.getActiveSpan()?.spanContext().traceId;
    let logged = false;
    const log = () => {
      if (logged) return;
      logged = true;
      logger.info('request', {
        requestId: res.locals.requestId,
        method: req.method,
        route: route(),
        status: res.statusCode,
        durationMs: Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10,
        ...(res.writableFinished ? {} : { aborted: true }),
        ...(traceId ? { traceId } : {}),
      });
    };
    res.once('finish', log);
    res.once('close', log);
    next();
  };
}

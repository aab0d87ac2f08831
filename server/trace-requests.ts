import { context, propagation, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';
import type { RequestHandler } from 'express';
import { capturePattern } from './route-pattern.ts';

/** Probes and scrapes: answered often and never part of a mission, so never a trace of their own. */
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The HTTP edge's SERVER span of each request (`POST /api/v1/missions`...), the child of an incoming `traceparent`
 * or the root of a new trace; everything the request does runs in its context, so the Temporal client's start of a
 * mission joins it. Named by its route once routing has matched one; 5xx answers mark it as an error.
 */
export function traceRequests(tracer: Tracer): RequestHandler {
  return (req, res, next) => {
    if (UNTRACED.has(req.path)) return next();
    const parent = propagation.extract(context.active(), req.headers);
    const span = tracer.startSpan(
      req.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: req.method,
          [ATTR_URL_PATH]: req.path,
          [ATTR_URL_SCHEME]: req.protocol,
          ...(req.get('user-agent') ? { [ATTR_USER_AGENT_ORIGINAL]: req.get('user-agent') } : {}),
          'cadenza.request.id': String(res.locals.requestId ?? ''),
        },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    const route = capturePattern(req);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const pattern = route();
      if (pattern) {
        span.updateName(`${req.method} ${pattern}`);
        span.setAttribute(ATTR_HTTP_ROUTE, pattern);
      }
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    // The body parsers go on from the request's stream events. Node 24 runs them in this context even for a body in
    // several packets (checked); binding the listeners keeps it so on runtimes whose async context does not.
    context.bind(active, req);
    context.with(active, next);
  };
}

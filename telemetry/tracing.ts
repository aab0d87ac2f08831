import type { Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Config } from '../config/config.ts';

/**
 * A process's OpenTelemetry tracing, built once in its composition root when tracing is on: the tracer every hook
 * uses (HTTP edge, Temporal client and activity interceptors, model and tool spans), the span processor the
 * workflow spans reach through the SDK's sink, and the flush and shutdown of what is still buffered.
 */
export type Tracing = {
  tracer: Tracer;
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Exports every span ended so far. */
  flush(): Promise<void>;
  /** Flushes, then stops the exporter. */
  shutdown(): Promise<void>;
};

/** Tracing exported over OTLP/HTTP to `config.telemetry.tracing`, or to `exporter` when given (tests); undefined when off. */
export function buildTracing(telemetry: Config['telemetry'], exporter?: SpanExporter): Tracing | undefined {
  if (!telemetry.tracing && !exporter) return undefined;
  const serviceName = telemetry.tracing?.serviceName ?? 'cadenza';
  return createTracing({
    serviceName,
    exporter: exporter ?? new OTLPTraceExporter({ url: telemetry.tracing!.tracesUrl }),
  });
}

/**
 * A tracer provider over a batching processor. The tracer is passed to every hook; what OpenTelemetry keeps
 * process-wide is registered too, once, and only when tracing is on: the active context follows async calls
 * (AsyncLocalStorage) and travels as W3C `traceparent`, which the Temporal interceptors and the HTTP tool executor
 * inject and extract through the API's globals. With tracing off nothing is registered and the API's no-ops carry nothing.
 */
export function createTracing(o: { serviceName: string; exporter: SpanExporter }): Tracing {
  const resource = new Resource({ [ATTR_SERVICE_NAME]: o.serviceName });
  const spanProcessor = new BatchSpanProcessor(o.exporter, { scheduledDelayMillis: 1_000 });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // A second provider in one process (two test stacks) keeps the first's registration: the context is the same.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return {
    tracer: provider.getTracer('cadenza'),
    spanProcessor,
    resource,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

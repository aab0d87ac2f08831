import type { Tracer } from '@opentelemetry/api';
import type { Next, WorkflowClientInterceptor, WorkflowDescribeInput, WorkflowQueryInput } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';

/**
 * The Temporal client's tracing: starts, signals, updates and cancels get their span (`StartWorkflow:<type>`...) and
 * carry the active context to the workflow in their headers. Queries and describes are left out: the event relay
 * reads progress at every wake-up, outside any request, and a trace per read would bury the missions' own.
 */
export function tracingClientInterceptor(tracer: Tracer): WorkflowClientInterceptor {
  return new ReadsUntraced({ tracer });
}

class ReadsUntraced extends OpenTelemetryWorkflowClientInterceptor {
  override query(input: WorkflowQueryInput, next: Next<WorkflowClientInterceptor, 'query'>): Promise<unknown> {
    return next(input);
  }
  override describe(input: WorkflowDescribeInput, next: Next<WorkflowClientInterceptor, 'describe'>) {
    return next(input);
  }
}

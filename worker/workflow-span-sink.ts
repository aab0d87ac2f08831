import { makeWorkflowExporter, type OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { InjectedSinks } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { Tracing } from '../telemetry/tracing.ts';

/**
 * The sink the workflow's spans (RunWorkflow, StartActivity...) leave the sandbox through, into the process's span
 * processor. The SDK's exporter copies the whole WorkflowInfo onto every span (memo, search attributes with the user
 * and tenant, build ids: nested values OpenTelemetry attributes do not even allow, ~1.5 KB a span); this one hands it
 * the workflow's id, run, type and task queue only, under the names the activity and client spans use.
 */
export function workflowSpanSink(tracing: Tracing): InjectedSinks<OpenTelemetrySinks> {
  const sdk = makeWorkflowExporter(tracing.spanProcessor, tracing.resource);
  return {
    exporter: {
      export: {
        fn: (info, spans) => {
          const attributes = {
            temporalWorkflowId: info.workflowId,
            run_id: info.runId,
            temporalWorkflowType: info.workflowType,
            temporalTaskQueue: info.taskQueue,
          };
          // The SDK's fn merges its first argument into each span's attributes: give it these, not the info.
          void sdk.export.fn(attributes as unknown as WorkflowInfo, spans);
        },
      },
    },
  };
}

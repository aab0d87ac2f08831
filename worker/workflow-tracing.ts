// Bundled into the workflow sandbox (workflow-bundle.ts, when tracing is on): deterministic code only.
import type { Next, QueryInput, WorkflowInboundCallsInterceptor, WorkflowInterceptors } from '@temporalio/workflow';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';

/**
 * The Temporal OpenTelemetry interceptors minus queries: the API's event relay queries a mission's progress at every
 * wake-up, and a span per read would bury the mission's trace under hundreds of one-span traces. Queries write no
 * history, so leaving them out changes nothing on replay.
 */
class MissionInboundInterceptor extends OpenTelemetryInboundInterceptor {
  override handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>): Promise<unknown> {
    return next(input);
  }
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new MissionInboundInterceptor()],
  outbound: [new OpenTelemetryOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});

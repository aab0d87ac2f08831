import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
const TRACING_INTERCEPTORS = fileURLToPath(new URL('./workflow-tracing.ts', import.meta.url));

/**
 * Bundles the workflow code once per process (webpack takes seconds); every Worker shares the result. With tracing,
 * the OpenTelemetry workflow interceptors are bundled in (a worker given a bundle ignores `workflowModules`); without
 * it they are left out entirely, so an untraced worker's workflows create no spans at all.
 */
export async function buildWorkflowBundle(opts: { tracing?: boolean } = {}): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    ...(opts.tracing ? { workflowInterceptorModules: [TRACING_INTERCEPTORS] } : {}),
    logger: quietLogger,
  });
}

const noop = () => {};
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };

import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/** Bundles the workflow code once per process (webpack takes seconds); every Worker shares the result. */
export async function buildWorkflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quietLogger });
}

const noop = () => {};
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };

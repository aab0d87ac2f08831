import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
const TRACING_INTERCEPTORS = fileURLToPath(new URL('./workflow-tracing.ts', import.meta.url));
const EVENTS_INTERCEPTORS = fileURLToPath(new URL('../workflows/events-interceptor.ts', import.meta.url));
const BUNDLE_PROCESS = fileURLToPath(new URL('./bundle-process.ts', import.meta.url));

/**
 * Bundles the workflow code once per process (webpack takes seconds); every Worker shares the result. The events
 * cursor's interceptor is always in; with tracing, the OpenTelemetry workflow interceptors are bundled in too (a worker
 * given a bundle ignores `workflowModules`); without it they are left out entirely, so an untraced worker's workflows
 * create no spans at all.
 */
export async function buildWorkflowBundle(opts: { tracing?: boolean } = {}): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: [EVENTS_INTERCEPTORS, ...(opts.tracing ? [TRACING_INTERCEPTORS] : [])],
    logger: quietLogger,
  });
}

/**
 * The same bundle, built by a short-lived child process (`bundle-process.ts`): webpack, its SWC native libraries and
 * everything they allocate leave with that process, instead of staying in a long-running worker's memory (about
 * 170 MB of RSS that a worker thread inside the process kept too: bench/thousand-missions.ts).
 */
export async function buildWorkflowBundleApart(opts: { tracing?: boolean } = {}): Promise<{ code: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'cadenza-bundle-'));
  const out = join(dir, 'workflow-bundle.js');
  try {
    await new Promise<void>((ok, fail) =>
      execFile(process.execPath, [BUNDLE_PROCESS, out, opts.tracing ? 'tracing' : 'plain'], (err, _stdout, stderr) =>
        err ? fail(new Error(`bundling the workflows failed: ${stderr.trim() || err.message}`)) : ok(),
      ),
    );
    return { code: await readFile(out, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const noop = () => {};
const quietLogger = { trace: noop, debug: noop, info: noop, warn: noop, error: noop, log: noop };

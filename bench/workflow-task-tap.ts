import { performance } from 'node:perf_hooks';
import type { Worker } from '@temporalio/worker';

/** When one activation of a workflow passed each step in the worker's main thread (ms since the epoch, fractional). */
export type ActivationTrace = {
  runId: string;
  /** Core handed the activation to JS (the poll resolved), and its encoded size. */
  polledAt: number;
  activationBytes: number;
  /** The SDK's handler took it (after rxjs's grouping by run). */
  handledAt: number;
  /** The round trip to the workflow thread that runs it in its V8 context. */
  activateStart: number;
  activateEnd: number;
  /** The second round trip, for the sink calls, and the sinks' own run on this thread. */
  sinksEnd: number;
  sinkCalls: number;
  /** The completion went to Core (encoded size), and Core answered (after the server took the task's completion). */
  completeStart: number;
  completeEnd: number;
  completionBytes: number;
};

const now = () => performance.timeOrigin + performance.now();

type Internals = {
  nativeWorker: {
    pollWorkflowActivation(): Promise<ArrayBuffer>;
    completeWorkflowActivation(completion: Buffer): Promise<void>;
  };
  workflowCreator: { createWorkflow(opts: unknown): Promise<WorkflowLike> };
  handleActivation(
    workflow: unknown,
    input: { activation: { runId: string; jobs: Array<{ removeFromCache?: unknown; queryWorkflow?: unknown }> } },
  ): Promise<unknown>;
  processSinkCalls(calls: unknown[], attrs: unknown): Promise<void>;
};
type WorkflowLike = { activate(a: unknown): Promise<unknown>; getAndResetSinkCalls(): Promise<unknown[]> };

/**
 * Taps a running Worker's workflow path in the main thread, for a bench only: the SDK's own steps (poll, handle,
 * activate in the workflow thread, sink calls, complete) are wrapped where the Worker looks them up at each call.
 * Activations are matched to their steps in order, so the tapped worker should run one workflow at a time.
 */
export function tapWorkflowTasks(worker: Worker): { traces: ActivationTrace[]; take(runId: string): ActivationTrace[] } {
  const w = worker as unknown as Internals;
  const traces: ActivationTrace[] = [];
  const polled: Array<{ at: number; bytes: number }> = [];
  // Completions go to Core in the order their activations were handled: untraced ones hold their place (undefined).
  const open: Array<ActivationTrace | undefined> = [];
  const native = w.nativeWorker;
  const poll = native.pollWorkflowActivation;
  native.pollWorkflowActivation = async () => {
    const buffer = await poll();
    polled.push({ at: now(), bytes: buffer.byteLength });
    return buffer;
  };
  const complete = native.completeWorkflowActivation;
  native.completeWorkflowActivation = async (completion) => {
    const trace = open.shift();
    const start = now();
    await complete(completion);
    if (trace) Object.assign(trace, { completeStart: start, completeEnd: now(), completionBytes: completion.byteLength });
    if (trace) traces.push(trace);
  };
  let current: ActivationTrace | undefined;
  const handle = w.handleActivation.bind(w);
  w.handleActivation = async (workflow, input) => {
    const p = polled.shift();
    const { activation } = input;
    // Evictions and queries are not workflow tasks: they are handled, not traced (protobufjs leaves unset fields null).
    const traced = activation.jobs.some((j) => j.removeFromCache == null && j.queryWorkflow == null);
    if (!traced || !p) {
      const out = await handle(workflow, input);
      open.push(undefined);
      return out;
    }
    const trace = { runId: activation.runId, polledAt: p.at, activationBytes: p.bytes, handledAt: now(), sinkCalls: 0 } as ActivationTrace;
    current = trace;
    const out = await handle(workflow, input);
    open.push(trace);
    return out;
  };
  const creator = w.workflowCreator;
  const create = creator.createWorkflow.bind(creator);
  creator.createWorkflow = async (opts) => {
    const wf = await create(opts);
    const activate = wf.activate.bind(wf);
    wf.activate = async (a) => {
      const t = current;
      if (t) t.activateStart = now();
      const out = await activate(a);
      if (t) t.activateEnd = now();
      return out;
    };
    return wf;
  };
  const sinks = w.processSinkCalls.bind(w);
  w.processSinkCalls = async (calls, attrs) => {
    await sinks(calls, attrs);
    if (current) Object.assign(current, { sinksEnd: now(), sinkCalls: calls.length });
  };
  return {
    traces,
    take(runId) {
      const mine = traces.filter((t) => t.runId === runId);
      for (const t of mine) traces.splice(traces.indexOf(t), 1);
      return mine;
    },
  };
}

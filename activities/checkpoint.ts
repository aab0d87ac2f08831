import { Context } from '@temporalio/activity';

/** An answer in the heartbeat details (kept-answer.ts): as it is, or its JSON gzipped (base64) when large. */
export type KeptAnswer = { value: unknown } | { gzip: string };

/**
 * What an activity attempt has done that a later run of it must not do again, carried by its heartbeats: Temporal
 * hands the details of the last heartbeat it received to the next attempt (`info.heartbeatDetails`; one still held by
 * the throttle when the attempt fails is lost, see database-outage.ts), and a run again within the same attempt (an
 * outage waited out) reads the latest from memory here.
 */
export type Checkpoint = {
  /**
   * The call's failed tries so far, a tool's (tool-activity.ts) or a model call's (database-outage.ts): a dead worker
   * or a lost dispatch costs an attempt, never a try.
   */
  failedTries?: number;
  /** The provider's or the tool's answer, kept until it is stored (kept-answer.ts). */
  answer?: KeptAnswer;
};

// Per attempt: the SDK builds one Context per activity task, dropped when the attempt ends.
const latest = new WeakMap<Context, Checkpoint>();
const beatAt = new WeakMap<Context, number>();

/** The attempt's checkpoint: what it recorded last, else what the previous attempt left. */
export function readCheckpoint(ctx = Context.current()): Checkpoint {
  return latest.get(ctx) ?? (ctx.info.heartbeatDetails as Checkpoint | undefined) ?? {};
}

/**
 * How long a changed checkpoint waits for its beat. An attempt that ends sooner (a reply stored a few milliseconds after
 * it came) sends none, so a fast call costs the server no heartbeat write; one still running then (a slow store, the
 * next try of a tool) gets it there, so a worker that dies later costs an attempt, never the call again or a try.
 */
export const CHECKPOINT_BEAT_DELAY_MS = 500;
const checkpointBeat = new WeakMap<Context, ReturnType<typeof setTimeout>>();

/**
 * Adds `change` to the attempt's checkpoint: beaten to the server if the attempt still runs CHECKPOINT_BEAT_DELAY_MS
 * later, or sooner with any beat of its own (a failing attempt beats once more before it fails: database-outage.ts).
 */
export function advanceCheckpoint(change: Checkpoint, ctx = Context.current()): void {
  latest.set(ctx, { ...readCheckpoint(ctx), ...change });
  if (checkpointBeat.has(ctx)) return;
  const timer = setTimeout(() => {
    checkpointBeat.delete(ctx);
    beat(ctx);
  }, CHECKPOINT_BEAT_DELAY_MS);
  checkpointBeat.set(ctx, timer);
}

/**
 * A heartbeat carrying the checkpoint. Every heartbeat of an activity goes through here: a heartbeat replaces the
 * details the server holds, so one without them would erase what this attempt or the previous one kept.
 */
export function beat(ctx = Context.current()): void {
  beatAt.set(ctx, Date.now());
  ctx.heartbeat(readCheckpoint(ctx));
}

/** When the attempt last heartbeat through `beat` (undefined: not yet). */
export function lastBeatAt(ctx = Context.current()): number | undefined {
  return beatAt.get(ctx);
}

/**
 * Keeps an attempt that has a heartbeat timeout alive while it runs without beating itself (a store step stretched by
 * a loaded worker and database): a beat whenever a third of the timeout has passed since the last one, so a worker
 * killed mid-step is replaced after the heartbeat timeout, not after the step's whole start-to-close bound. An
 * activity that beats on its own (model and tool calls, every 2 s) never gets an extra one; a step that ends within a
 * third of the timeout sends none. Returns the stop, to call when the attempt ends (it also drops a checkpoint's beat
 * still waiting).
 */
export function keepAlive(ctx = Context.current()): () => void {
  const timeoutMs = ctx.info.heartbeatTimeoutMs ?? 0;
  const every = timeoutMs / 3;
  const started = Date.now();
  const timer =
    timeoutMs > 0
      ? setInterval(() => {
          if (Date.now() - (beatAt.get(ctx) ?? started) >= every) beat(ctx);
        }, every)
      : undefined;
  return () => {
    clearInterval(timer);
    clearTimeout(checkpointBeat.get(ctx));
    checkpointBeat.delete(ctx);
  };
}

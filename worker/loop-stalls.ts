import type { Logger } from '../lib/logger.ts';

/** How often the loop is sampled, and the lateness logged as a stall. */
const SAMPLE_MS = 1_000;
export const STALL_LOG_MS = 5_000;

/**
 * Logs each time the worker's event loop was held longer than `STALL_LOG_MS` (a timer due every second ran that much
 * late): a held loop sends no heartbeat, so a stall longer than an activity's heartbeat timeout (30 s) fails its
 * attempts; the log says whether a timed-out attempt had one behind it. Returns the stop.
 */
export function watchLoopStalls(logger: Logger, opts: { sampleMs?: number; logOverMs?: number } = {}): () => void {
  const sampleMs = opts.sampleMs ?? SAMPLE_MS;
  const logOverMs = opts.logOverMs ?? STALL_LOG_MS;
  let due = Date.now() + sampleMs;
  const timer = setInterval(() => {
    const now = Date.now();
    const lateMs = now - due;
    if (lateMs > logOverMs) logger.warn('event loop stalled', { stalledMs: lateMs, until: new Date(now).toISOString() });
    due = now + sampleMs;
  }, sampleMs);
  timer.unref();
  return () => clearInterval(timer);
}

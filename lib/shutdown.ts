import type { Logger } from './logger.ts';

/** The ordered clean-up of a process: `add` a step as each resource opens, `shutdown` runs them in reverse. */
export type Shutdown = ReturnType<typeof createShutdown>;

/**
 * Ordered clean-up on SIGTERM/SIGINT: steps run last-registered first, each awaited, then the process exits.
 * `signals: false` and an `exit` of its own make the same clean-up usable inside a test (no handlers, no exit).
 */
export function createShutdown(logger: Logger, opts: { forceAfterMs?: number; exit?: (code: number) => void; signals?: boolean } = {}) {
  const steps: Array<{ name: string; run: () => Promise<void> | void }> = [];
  let running: Promise<number> | undefined;
  const exit = opts.exit ?? ((code: number) => process.exit(code));

  /** Runs the steps once (later calls share the first run) and resolves with the exit code: 1 when a step failed. */
  async function shutdown(reason: string): Promise<number> {
    if (running) return running;
    running = (async () => {
      logger.info('shutting down', { reason });
      const force = setTimeout(() => {
        logger.error('shutdown took too long; exiting');
        exit(1);
      }, opts.forceAfterMs ?? 60_000);
      force.unref();
      let code = 0;
      for (const step of [...steps].reverse()) {
        try {
          await step.run();
        } catch (err) {
          code = 1;
          logger.error(`shutdown step failed: ${step.name}`, { err });
        }
      }
      clearTimeout(force);
      logger.info('stopped');
      exit(code);
      return code;
    })();
    return running;
  }

  if (opts.signals !== false) for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void shutdown(signal));
  return { add: (name: string, run: () => Promise<void> | void) => void steps.push({ name, run }), shutdown };
}

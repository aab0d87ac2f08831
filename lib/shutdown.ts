import type { Logger } from './logger.ts';

/** Ordered clean-up on SIGTERM/SIGINT: steps run last-registered first, each awaited, then the process exits. */
export function createShutdown(logger: Logger, opts: { forceAfterMs?: number; exit?: (code: number) => void } = {}) {
  const steps: Array<{ name: string; run: () => Promise<void> | void }> = [];
  let running: Promise<void> | undefined;
  const exit = opts.exit ?? ((code: number) => process.exit(code));

  async function shutdown(reason: string): Promise<void> {
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
    })();
    return running;
  }

  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void shutdown(signal));
  return { add: (name: string, run: () => Promise<void> | void) => void steps.push({ name, run }), shutdown };
}

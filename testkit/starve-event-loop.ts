/**
 * Holds this process's event loop for `ms` (a busy wait): what a worker on a CPU-starved machine lives through, when
 * no timer, socket or heartbeat of its JavaScript runs for seconds. Tests only: the worker under test shares the
 * test's process, so a tool or model handler calling this starves the activity that called it.
 */
export function starveEventLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

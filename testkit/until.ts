/** Resolves when `cond` holds, checked every `everyMs`; fails after `timeoutMs` (a deadline, never a fixed sleep). */
export async function until(
  cond: () => boolean | Promise<boolean>,
  o: { timeoutMs?: number; everyMs?: number; what?: string } = {},
): Promise<void> {
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`${o.what ?? 'condition'} not met within ${o.timeoutMs ?? 30_000} ms`);
    await new Promise((ok) => setTimeout(ok, o.everyMs ?? 50));
  }
}

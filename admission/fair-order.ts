/** Running-mission limits; undefined = unlimited. */
export type RunningLimits = { perUser: number | undefined; perTenant: number | undefined };
export type QueuedMission = { id: string; tenantId: string; userId: string };
export type HeldSlots = { tenantId: string; userId: string; count: number };

/**
 * Which queued missions take the free slots, in the order they start. Each user's missions go oldest first; each
 * slot goes to the tenant running the fewest missions, then, inside it, to the user running the fewest (ties: the
 * oldest waiting mission), so a backlog that cannot start never blocks another tenant or user, and users of a full
 * tenant take its slots in turn. `queued` is oldest first.
 */
export function pickAdmissions(held: HeldSlots[], queued: QueuedMission[], limits: RunningLimits): string[] {
  const userKey = (m: { tenantId: string; userId: string }) => `${m.tenantId}\u0000${m.userId}`;
  const byUser = new Map<string, number>();
  const byTenant = new Map<string, number>();
  for (const h of held) {
    byUser.set(userKey(h), (byUser.get(userKey(h)) ?? 0) + h.count);
    byTenant.set(h.tenantId, (byTenant.get(h.tenantId) ?? 0) + h.count);
  }
  // Per user, a FIFO of its queued missions; the position of each user's head breaks ties (oldest waits longest).
  const waiting = new Map<string, Array<{ id: string; at: number; tenantId: string }>>();
  queued.forEach((m, at) => {
    const list = waiting.get(userKey(m)) ?? [];
    list.push({ id: m.id, at, tenantId: m.tenantId });
    waiting.set(userKey(m), list);
  });
  const fits = (n: number | undefined, limit: number | undefined) => limit === undefined || (n ?? 0) < limit;
  const picked: string[] = [];
  for (;;) {
    let best: { user: string; tenantId: string; rank: [number, number, number] } | undefined;
    for (const [user, list] of waiting) {
      const head = list[0];
      if (!head || !fits(byUser.get(user), limits.perUser) || !fits(byTenant.get(head.tenantId), limits.perTenant)) continue;
      const rank: [number, number, number] = [byTenant.get(head.tenantId) ?? 0, byUser.get(user) ?? 0, head.at];
      if (!best || lessThan(rank, best.rank)) best = { user, tenantId: head.tenantId, rank };
    }
    if (!best) return picked;
    picked.push(waiting.get(best.user)!.shift()!.id);
    byUser.set(best.user, (byUser.get(best.user) ?? 0) + 1);
    byTenant.set(best.tenantId, (byTenant.get(best.tenantId) ?? 0) + 1);
  }
}

function lessThan(a: [number, number, number], b: [number, number, number]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

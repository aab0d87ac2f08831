/**
 * The payload on the events channel: the mission, the seq of the last event its workflow emitted, so a relay that has
 * read that far already does not ask again, and `end` when that event was the terminal one (the mission's final
 * events are stored with its row). A payload without a seq (a worker of an earlier version) means "look".
 */
export function encodeEventsWake(missionId: string, lastSeq: number, ended = false): string {
  return `${missionId}:${lastSeq}${ended ? ':end' : ''}`;
}

export function parseEventsWake(payload: string): { missionId: string; lastSeq?: number; ended?: true } {
  const ended = payload.endsWith(':end');
  const rest = ended ? payload.slice(0, -':end'.length) : payload;
  const at = rest.lastIndexOf(':');
  const seq = at > 0 ? Number(rest.slice(at + 1)) : NaN;
  if (!Number.isSafeInteger(seq) || seq <= 0) return { missionId: payload };
  return { missionId: rest.slice(0, at), lastSeq: seq, ...(ended ? { ended: true as const } : {}) };
}

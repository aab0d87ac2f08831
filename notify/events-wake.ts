/**
 * The payload on the events channel: the mission and the seq of the last event its workflow emitted, so a relay that
 * has read that far already does not ask again. A payload without a seq (a worker of an earlier version) means "look".
 */
export function encodeEventsWake(missionId: string, lastSeq: number): string {
  return `${missionId}:${lastSeq}`;
}

export function parseEventsWake(payload: string): { missionId: string; lastSeq?: number } {
  const at = payload.lastIndexOf(':');
  const seq = at > 0 ? Number(payload.slice(at + 1)) : NaN;
  return Number.isSafeInteger(seq) && seq > 0 ? { missionId: payload.slice(0, at), lastSeq: seq } : { missionId: payload };
}

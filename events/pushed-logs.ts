import type { LogEvent } from '../contracts/events.ts';

// How many missions' pushed logs the relay keeps for streams still to open, and how many events each at most.
const RECENT_MISSIONS = 5_000;
const RECENT_EVENTS = 200;

/**
 * The logs of recently started missions as workers pushed them: from seq 1, without a gap, and no wake-up since naming
 * a seq past them (a wake-up means events that were not pushed). A stream that opens on such a mission starts from it
 * instead of a query. Bounded by missions (the oldest dropped) and by events per mission.
 */
export function createPushedLogs() {
  const recent = new Map<string, LogEvent[]>(); // most recently pushed last
  const wokenUpTo = new Map<string, number>(); // the highest seq a wake-up named, per mission (most recent last)

  return {
    pushed(missionId: string, events: LogEvent[]): void {
      const known = recent.get(missionId);
      recent.delete(missionId);
      const log = events[0]!.seq === 1 ? [] : known;
      if (!log || events[0]!.seq > (log.at(-1)?.seq ?? 0) + 1) return; // not from the start, or a gap
      log.push(...events.filter((e) => e.seq > (log.at(-1)?.seq ?? 0)));
      if (log.length > RECENT_EVENTS || (wokenUpTo.get(missionId) ?? 0) > log.at(-1)!.seq) return;
      recent.set(missionId, log);
      if (recent.size > RECENT_MISSIONS) recent.delete(recent.keys().next().value!);
    },
    /** Events that came by a wake-up are not in the pushed log: it is no longer whole (nor will be, if it comes later). */
    wokenUp(missionId: string, lastSeq: number | undefined, ended: boolean): void {
      if (ended || lastSeq === undefined) {
        recent.delete(missionId);
        if (ended) wokenUpTo.delete(missionId);
      } else if (lastSeq > (wokenUpTo.get(missionId) ?? 0)) {
        wokenUpTo.delete(missionId);
        wokenUpTo.set(missionId, lastSeq);
        if (wokenUpTo.size > RECENT_MISSIONS) wokenUpTo.delete(wokenUpTo.keys().next().value!);
        if (lastSeq > (recent.get(missionId)?.at(-1)?.seq ?? Infinity)) recent.delete(missionId);
      }
    },
    /** A copy of the mission's whole pushed log, if this relay has one. */
    log(missionId: string): LogEvent[] | undefined {
      const log = recent.get(missionId);
      return log && [...log];
    },
    /** The listening connection was re-opened: what was sent meanwhile is lost. */
    clear(): void {
      recent.clear();
      wokenUpTo.clear();
    },
  };
}

import pg from 'pg';
import { parseEventsJson, parseEventsWake } from '../events/wire.ts';
import { createUnprovenEvents } from '../events/unproven-events.ts';
import { CHANNELS } from '../notify/notifications.ts';

/**
 * When a notification on the path reached a listener: how it came (`push`: the events themselves, released by their
 * proof; `wake`: a wake-up, or unproven events no proof came for in time).
 */
export type Heard = { at: number; kind: 'push' | 'wake' };

/**
 * The middle of the cancel's and the events' paths, seen from outside: a Postgres session of this process LISTENs on
 * the tool-cancel and events channels, as the worker's and the API's listeners do, and stamps when each announcement
 * of a watched call (`missionId/toolUseId`: its `stop:` NOTIFY, sent by the API before the Update) and each event of a
 * watched mission (pushed: its proof heard, paired with its unproven events as the relay pairs them; or covered by a
 * wake-up naming a later seq) arrived. Its clock is this process's event
 * loop, so the stamps hold what this process's loop delay adds.
 */
export async function listenPathStamps(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const watched = new Set<string>();
  const cancels = new Map<string, number>();
  const events = new Map<string, Heard>();
  const lastSeq = new Map<string, number>();
  const stamp = (missionId: string, upTo: number, kind: Heard['kind'], at: number) => {
    for (let seq = (lastSeq.get(missionId) ?? 0) + 1; seq <= upTo; seq++) events.set(`${missionId}:${seq}`, { at, kind });
    lastSeq.set(missionId, Math.max(upTo, lastSeq.get(missionId) ?? 0));
  };
  const pairs = createUnprovenEvents({
    released: (missionId, proven) => stamp(missionId, proven.at(-1)!.seq, 'push', Date.now()),
    expired: (missionId, lastSeq) => stamp(missionId, lastSeq, 'wake', Date.now()),
  });
  client.on('notification', (n) => {
    const at = Date.now();
    const payload = n.payload ?? '';
    if (n.channel === CHANNELS.toolCancel) {
      if (payload.startsWith('stop:') && !cancels.has(payload.slice(5))) cancels.set(payload.slice(5), at);
      return;
    }
    // Unproven events and proofs start with their mission's id (`{"missionId":"…`): parsed only when it is watched.
    const id = payload.startsWith('{') ? /^\{"missionId":"([^"]+)"/.exec(payload)?.[1] : parseEventsWake(payload).missionId;
    if (!id || !watched.has(id)) return;
    const json = parseEventsJson(payload);
    if (json && 'proof' in json) return pairs.proof(id, json.proof);
    if (json) return pairs.unproven(id, json.unproven);
    const wake = parseEventsWake(payload);
    pairs.wokenUp(id, wake.lastSeq, wake.ended ?? false);
    if (wake.lastSeq) stamp(id, wake.lastSeq, 'wake', at);
  });
  await client.query(`listen ${CHANNELS.toolCancel}`);
  await client.query(`listen ${CHANNELS.events}`);
  return {
    /** Stamps this mission's events from now on. */
    watch: (missionId: string) => void watched.add(missionId),
    /** When the API's `stop:` announcement of this call was heard. */
    cancelHeard: (call: string) => cancels.get(call),
    /** When the worker's push or wake-up covering this event was heard. */
    eventHeard: (missionId: string, seq: number) => events.get(`${missionId}:${seq}`),
    close: () => (pairs.clear(), client.end()),
  };
}
export type PathStamps = Awaited<ReturnType<typeof listenPathStamps>>;

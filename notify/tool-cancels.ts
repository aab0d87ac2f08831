import { CHANNELS, type Notifications } from './notifications.ts';

/**
 * What an announcement says: `stop` — the cancel was asked for and the workflow has not accepted it yet (the call
 * stops now); `accepted` — Temporal has the cancel (the call fetches its cancellation now).
 */
export type CancelPhase = 'stop' | 'accepted';

/**
 * The fast path of a call's cancel (a tool call, by its toolUseId; a model call an interrupt cancelled, by its
 * `model-<n>` id): the API names the call on the cancel channel; the worker running it hears it at once instead of at
 * its next heartbeat. Temporal's cancellation stays the record (the activity still ends through it).
 */
export type ToolCancels = {
  /** The API side: this call is being cancelled; EVERY_CALL: every call of the mission (the mission is). */
  announce(missionId: string, callId: string, phase?: CancelPhase): Promise<void>;
  /** The worker side: `onCancel` runs at each announcement of the call, until the returned function is called. */
  watch(missionId: string, callId: string, onCancel: (phase: CancelPhase) => void): () => void;
};

/** The call id that names every call of a mission: announced when the whole mission is cancelled. */
export const EVERY_CALL = '*';

const STOP = 'stop:';

/** `listen`: false on the API side, which only announces (no listening for what it never watches). */
export function createToolCancels(notifications: Notifications, opts: { listen: boolean }): ToolCancels {
  const watched = new Map<string, Set<(phase: CancelPhase) => void>>();
  // Listening from the start, so the first call of a fresh worker is already heard.
  if (opts.listen)
    notifications.listen(CHANNELS.toolCancel, (payload) => {
      const phase: CancelPhase = payload.startsWith(STOP) ? 'stop' : 'accepted';
      const key = phase === 'stop' ? payload.slice(STOP.length) : payload;
      if (!key.endsWith(`/${EVERY_CALL}`)) return watched.get(key)?.forEach((f) => f(phase));
      const prefix = key.slice(0, -EVERY_CALL.length);
      for (const [k, set] of watched) if (k.startsWith(prefix)) set.forEach((f) => f(phase));
    });
  const keyOf = (missionId: string, callId: string) => `${missionId}/${callId}`;
  return {
    announce: (missionId, callId, phase = 'accepted') =>
      notifications.notify(CHANNELS.toolCancel, `${phase === 'stop' ? STOP : ''}${keyOf(missionId, callId)}`),
    watch(missionId, callId, onCancel) {
      const key = keyOf(missionId, callId);
      let set = watched.get(key);
      if (!set) watched.set(key, (set = new Set()));
      set.add(onCancel);
      return () => {
        set.delete(onCancel);
        if (set.size === 0 && watched.get(key) === set) watched.delete(key);
      };
    },
  };
}

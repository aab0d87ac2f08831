import { CHANNELS, type Notifications } from './notifications.ts';

/**
 * The fast path of a call's cancel (a tool call, by its toolUseId; a model call an interrupt cancelled, by its
 * `model-<n>` id): the API, once the workflow accepted the cancel, names the call on the cancel
 * channel; the worker running it hears it at once instead of at its next heartbeat. Temporal's cancellation stays
 * the record (the activity still ends through it).
 */
export type ToolCancels = {
  /** The API side: this call is being cancelled; EVERY_CALL: every call of the mission (the mission is). */
  announce(missionId: string, callId: string): Promise<void>;
  /** The worker side: `onCancel` runs when the call is announced, until the returned function is called. */
  watch(missionId: string, callId: string, onCancel: () => void): () => void;
};

/** The call id that names every call of a mission: announced when the whole mission is cancelled. */
export const EVERY_CALL = '*';

/** `listen`: false on the API side, which only announces (no listening for what it never watches). */
export function createToolCancels(notifications: Notifications, opts: { listen: boolean }): ToolCancels {
  const watched = new Map<string, Set<() => void>>();
  // Listening from the start, so the first call of a fresh worker is already heard.
  if (opts.listen)
    notifications.listen(CHANNELS.toolCancel, (key) => {
      if (!key.endsWith(`/${EVERY_CALL}`)) return watched.get(key)?.forEach((f) => f());
      const prefix = key.slice(0, -EVERY_CALL.length);
      for (const [k, set] of watched) if (k.startsWith(prefix)) set.forEach((f) => f());
    });
  const keyOf = (missionId: string, callId: string) => `${missionId}/${callId}`;
  return {
    announce: (missionId, callId) => notifications.notify(CHANNELS.toolCancel, keyOf(missionId, callId)),
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

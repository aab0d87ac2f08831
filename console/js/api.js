// The console's only way to the server: the public HTTP API under /api/v1, with the key the user signed in with.

const KEY = 'cadenza.apiKey';

export const session = {
  get key() {
    return sessionStorage.getItem(KEY);
  },
  set(key) {
    sessionStorage.setItem(KEY, key);
  },
  clear() {
    sessionStorage.removeItem(KEY);
  },
};

/** An API error answer: `status`, `code`, `message` and `details` as the API sent them. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code;
    this.details = body?.error?.details;
  }
}

/** One API call. `body` is sent as JSON unless `type` names another content type (then it is sent as is). */
export async function api(path, { method = 'GET', body, type, key = session.key, accept } = {}) {
  const headers = { authorization: `Bearer ${key}` };
  if (accept) headers.accept = accept;
  let payload;
  if (body !== undefined) {
    headers['content-type'] = type ?? 'application/json';
    payload = type ? body : JSON.stringify(body);
  }
  const res = await fetch(`/api/v1${path}`, { method, headers, body: payload });
  const isJson = res.headers.get('content-type')?.includes('json');
  const data = isJson ? await res.json() : await res.text();
  if (!res.ok) throw new ApiError(res.status, isJson ? data : undefined);
  return data;
}

/**
 * Follows a mission's Server-Sent Events: each event once, in order. A dropped connection is resumed with
 * `Last-Event-ID` (the API replays from there, with neither gap nor duplicate); live events (streamed text) carry
 * no id and are not replayed. Ends after the terminal status event or when `signal` aborts.
 */
export async function followEvents(missionId, { onEvent, onState, signal }) {
  let lastSeq = 0;
  let delay = 500;
  while (!signal.aborted) {
    let ended = false;
    try {
      const res = await fetch(`/api/v1/missions/${missionId}/events`, {
        headers: { authorization: `Bearer ${session.key}`, 'last-event-id': String(lastSeq) },
        signal,
      });
      if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => undefined));
      onState?.('live');
      delay = 500;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const frame = parseFrame(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if (!frame) continue;
          if (frame.id !== undefined) {
            if (frame.id <= lastSeq) continue;
            lastSeq = frame.id;
          }
          onEvent(frame.event, frame.data);
          if (frame.event === 'status' && ['completed', 'failed', 'cancelled'].includes(frame.data.status)) ended = true;
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError && err.status >= 400 && err.status < 500) {
        onState?.('error', err);
        return;
      }
    }
    if (ended) {
      onState?.('ended');
      return;
    }
    onState?.('reconnecting');
    await new Promise((ok) => setTimeout(ok, delay));
    delay = Math.min(delay * 2, 5_000);
  }
}

function parseFrame(text) {
  let id;
  let event = 'message';
  const data = [];
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = Number.parseInt(value, 10);
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return undefined;
  try {
    return { id: Number.isFinite(id) ? id : undefined, event, data: JSON.parse(data.join('\n')) };
  } catch {
    return undefined;
  }
}

import type { CliApi } from './api.ts';

/** One SSE event as the API sends it: `event:` is its type, `data:` its JSON. */
export type StreamEvent = { id: string | undefined; type: string; data: Record<string, unknown> };

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/**
 * A mission's events from `GET /missions/:id/events` until its terminal status; a dropped connection is resumed with
 * `Last-Event-ID`, so no event is lost or repeated.
 */
export async function* missionEvents(api: CliApi, missionId: string, signal: AbortSignal): AsyncGenerator<StreamEvent> {
  let lastId: string | undefined;
  for (let attempt = 0; attempt < 20 && !signal.aborted; attempt++) {
    const res = await api
      .send('GET', `/api/v1/missions/${missionId}/events${lastId ? `?lastEventId=${lastId}` : ''}`, { signal })
      .catch((err: unknown) => (signal.aborted ? undefined : Promise.reject(err)));
    if (!res?.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const event = parse(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if (!event) continue;
          if (event.id) lastId = event.id;
          yield event;
          if (event.type === 'status' && TERMINAL.has(String(event.data.status))) return;
          // The one event without a seq: the mission has no workflow (it never started); nothing more will come.
          if (event.type === 'error' && !event.id) return;
        }
      }
    } catch (err) {
      if (signal.aborted) return;
      if (!(err instanceof TypeError)) throw err; // a dropped connection: resume below
    }
    await new Promise((ok) => setTimeout(ok, Math.min(200 * 2 ** attempt, 3_000)));
  }
}

function parse(frame: string): StreamEvent | undefined {
  let id: string | undefined;
  let type = 'message';
  let data: string | undefined;
  for (const line of frame.split('\n')) {
    if (line.startsWith('id: ')) id = line.slice(4);
    else if (line.startsWith('event: ')) type = line.slice(7);
    else if (line.startsWith('data: ')) data = line.slice(6);
  }
  if (data === undefined) return undefined;
  try {
    return { id, type, data: JSON.parse(data) as Record<string, unknown> };
  } catch {
    return undefined;
  }
}

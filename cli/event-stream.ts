import type { CliApi } from './api.ts';

/** One SSE event as the API sends it: `event:` is its type, `data:` its JSON. */
export type StreamEvent = { id: string | undefined; type: string; data: Record<string, unknown> };

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** A mission's events from `GET /missions/:id/events` until its terminal status. */
export const missionEvents = (api: CliApi, missionId: string, signal: AbortSignal): AsyncGenerator<StreamEvent> =>
  streamEvents(api, `/api/v1/missions/${missionId}/events`, (e) => e.type === 'status' && TERMINAL.has(String(e.data.status)), signal);

/** An eval run's events from `GET /eval-runs/:id/events` until its terminal `run_status`. */
export const evalRunEvents = (api: CliApi, evalRunId: string, signal: AbortSignal): AsyncGenerator<StreamEvent> =>
  streamEvents(api, `/api/v1/eval-runs/${evalRunId}/events`, (e) => e.type === 'run_status' && e.data.status !== 'running', signal);

/**
 * A stream's events until `isEnd` says one was the last; a dropped connection is resumed with `Last-Event-ID`, so no
 * event is lost or repeated.
 */
async function* streamEvents(
  api: CliApi,
  path: string,
  isEnd: (e: StreamEvent) => boolean,
  signal: AbortSignal,
): AsyncGenerator<StreamEvent> {
  let lastId: string | undefined;
  for (let attempt = 0; attempt < 20 && !signal.aborted; attempt++) {
    const res = await api
      .send('GET', `${path}${lastId ? `?lastEventId=${lastId}` : ''}`, { signal })
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
          if (isEnd(event)) return;
          // The one event without a seq: the workflow is gone (it never started); nothing more will come.
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

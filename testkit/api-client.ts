import type { MissionEvent } from '../contracts/events.ts';
import { checkEvent, checkResponse } from './openapi-conformance.ts';

export type ApiResponse = { status: number; body: any; headers: Headers }; // eslint-disable-line @typescript-eslint/no-explicit-any
export type SseFrame = { id?: string; event?: string; data?: string; comment?: string };

export const ALL_CAPABILITIES = ['mission.run', 'mission.read', 'skill.read', 'skill.write', 'skill.review'];

/** A thin HTTP client for the API, as a user's program would call it; every response is checked against the OpenAPI document. */
export function createApiClient(baseUrl: string, adminKey: string) {
  async function request(
    method: string,
    path: string,
    o: { key?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...(o.key ? { authorization: `Bearer ${o.key}` } : {}), ...o.headers };
    let body: string | undefined;
    if (o.raw !== undefined) body = o.raw;
    else if (o.body !== undefined) {
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: keep the text */
    }
    // Every response a test sees must be one the OpenAPI document describes.
    checkResponse(method, path, res.status, res.headers.get('content-type'), parsed);
    return { status: res.status, body: parsed, headers: res.headers };
  }

  const api = {
    request,
    async newKey(capabilities = ALL_CAPABILITIES, owner = { tenantId: 'acme', userId: `u${Math.random().toString(36).slice(2, 8)}` }) {
      const res = await request('POST', '/api/v1/admin/keys', { key: adminKey, body: { ...owner, capabilities } });
      if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.key as string;
    },
    async createSkill(key: string, md: string) {
      const res = await request('POST', '/api/v1/skills', { key, raw: md, headers: { 'content-type': 'text/markdown' } });
      if (res.status !== 201) throw new Error(`skill creation failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as { id: string; name: string; version: number };
    },
    async startMission(key: string, body: Record<string, unknown>) {
      const res = await request('POST', '/api/v1/missions', { key, body: { workspaceCode: 'ws-1', ...body } });
      if (res.status !== 202 && res.status !== 200) throw new Error(`mission start failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as { id: string; status: string };
    },
    getMission: (key: string, id: string) => request('GET', `/api/v1/missions/${id}`, { key }),
    /**
     * Polls GET /missions/:id until the mission has ended: not `queued`, `starting` (admitted, its workflow being started
     * or woken by another process's admission pass), `running` or `idle` (a session waiting); or a timeout.
     */
    async waitForEnd(key: string, id: string, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await api.getMission(key, id);
        if (!['queued', 'starting', 'running', 'idle', 'paused'].includes(res.body.status)) return res.body;
        if (Date.now() > deadline) throw new Error(`mission ${id} still running after ${timeoutMs} ms`);
        await new Promise((ok) => setTimeout(ok, 150));
      }
    },
    /**
     * Reads the SSE stream to its end (or until `stopAfter` mission events; live events do not count), returning every
     * frame. `path`: another stream than the mission's (an eval run's).
     */
    async readEvents(
      key: string,
      id: string,
      o: { lastEventId?: string; stopAfter?: number; onFrame?: (f: SseFrame) => void; path?: string } = {},
    ) {
      const ac = new AbortController();
      const path = o.path ?? `/api/v1/missions/${id}/events`;
      const res = await fetch(`${baseUrl}${path}`, {
        headers: { authorization: `Bearer ${key}`, ...(o.lastEventId ? { 'last-event-id': o.lastEventId } : {}) },
        signal: ac.signal,
      });
      const frames: SseFrame[] = [];
      const decoder = new TextDecoder();
      let buffer = '';
      let events = 0;
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          buffer += decoder.decode(chunk, { stream: true });
          let cut: number;
          while ((cut = buffer.indexOf('\n\n')) >= 0) {
            const frame = parseFrame(buffer.slice(0, cut));
            buffer = buffer.slice(cut + 2);
            frames.push(frame);
            if (frame.event !== undefined && frame.data !== undefined) checkEvent(path, frame.event, JSON.parse(frame.data), frame.id);
            o.onFrame?.(frame);
            if (frame.id !== undefined && ++events === o.stopAfter) {
              ac.abort();
              return { status: res.status, headers: res.headers, frames };
            }
          }
        }
      } catch (err) {
        if (!ac.signal.aborted) throw err;
      }
      return { status: res.status, headers: res.headers, frames };
    },
  };
  return api;
}

/** The mission events in a list of SSE frames. */
export const eventsOf = (frames: SseFrame[]): MissionEvent[] =>
  frames.filter((f) => f.id !== undefined && f.data !== undefined).map((f) => JSON.parse(f.data!) as MissionEvent);

function parseFrame(text: string): SseFrame {
  const frame: SseFrame = {};
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    else if (line.startsWith('id: ')) frame.id = line.slice(4);
    else if (line.startsWith('event: ')) frame.event = line.slice(7);
    else if (line.startsWith('data: ')) frame.data = line.slice(6);
  }
  return frame;
}

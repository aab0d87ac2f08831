import { readFile } from 'node:fs/promises';
import type { MissionEvent } from '../contracts/events.ts';

/** Runs the demo mission through the public HTTP API, printing its progress live, as a newcomer's client would. */
export async function runDemo(opts: {
  apiUrl: string;
  adminKey: string;
  uiUrl?: string;
  namespace: string;
  print?: (line: string) => void;
}) {
  const print = opts.print ?? ((line: string) => console.log(line));
  const call = async (path: string, init: RequestInit & { key: string }) => {
    const res = await fetch(`${opts.apiUrl}/api/v1${path}`, {
      ...init,
      headers: { authorization: `Bearer ${init.key}`, 'content-type': 'application/json', ...init.headers },
    });
    const body = res.headers.get('content-type')?.includes('json') ? await res.json() : await res.text();
    return { status: res.status, body: body as Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
  };
  const created = await call('/admin/keys', {
    key: opts.adminKey,
    method: 'POST',
    body: JSON.stringify({
      tenantId: 'demo',
      userId: 'newcomer',
      capabilities: ['mission.run', 'mission.read', 'skill.read', 'skill.write', 'skill.review'],
    }),
  });
  if (created.status !== 201) throw new Error(`creating the demo key failed: ${JSON.stringify(created.body)}`);
  const key = created.body.key as string;
  const skillMd = await readFile(new URL('./trip-weather-brief/SKILL.md', import.meta.url), 'utf8');
  const skill = await call('/skills', { key, method: 'POST', body: skillMd, headers: { 'content-type': 'text/markdown' } });
  if (skill.status !== 201 && skill.status !== 409) throw new Error(`storing the demo skill failed: ${JSON.stringify(skill.body)}`);
  const mission = await call('/missions', {
    key,
    method: 'POST',
    body: JSON.stringify({
      skill: 'trip-weather-brief',
      objective: 'I am flying tomorrow: brief me on the weather in Lisbon.',
      workspaceCode: 'demo',
    }),
  });
  if (mission.status !== 202) throw new Error(`starting the demo mission failed: ${JSON.stringify(mission.body)}`);
  const id = mission.body.id as string;
  print(`\nDemo mission ${id} started (skill trip-weather-brief).`);
  print(`Watch it in the console: ${opts.apiUrl}/#/missions/${id}   (sign in with the demo key ${key})`);
  print(`Live progress:`);
  const stream = await fetch(`${opts.apiUrl}/api/v1/missions/${id}/events`, { headers: { authorization: `Bearer ${key}` } });
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = frame.split('\n').find((l) => l.startsWith('data: '));
      // Live events (the model's streamed text) carry no id: the demo prints the answer whole at the end instead.
      const live = !frame.split('\n').some((l) => l.startsWith('id: '));
      if (data && !live) print(`  ${describe(JSON.parse(data.slice(6)) as MissionEvent)}`);
    }
  }
  const final = await call(`/missions/${id}`, { key, method: 'GET' });
  print(`\nResult: ${final.body.result?.text ?? JSON.stringify(final.body.error)}`);
  for (const canvasId of (final.body.result?.canvasSpecIds ?? []) as string[]) {
    const canvas = await call(`/canvases/${canvasId}`, { key, method: 'GET' });
    print(`Canvas ${canvasId}: ${canvas.body.type} "${canvas.body.title}" (GET /api/v1/canvases/${canvasId})`);
  }
  if (opts.uiUrl) print(`See the run in the Temporal Web UI: ${opts.uiUrl}/namespaces/${opts.namespace}/workflows/mission-${id}`);
  print(`The mission console: ${opts.apiUrl}/   (demo key ${key})`);
  return { id, key, status: final.body.status as string };
}

function describe(e: MissionEvent): string {
  switch (e.type) {
    case 'status':
      return `[${e.seq}] mission ${e.status}`;
    case 'turn':
      return `[${e.seq}] turn ${e.turn}`;
    case 'tool_start':
      return `[${e.seq}] tool ${e.tool} started`;
    case 'tool_end':
      return `[${e.seq}] tool ${e.tool} ${e.status} in ${e.durationMs} ms${e.error ? `: ${e.error}` : ''}`;
    case 'error':
      return `[${e.seq}] error in ${e.phase}: ${e.message}`;
    case 'tool_attempt':
      return `[${e.seq}] tool ${e.toolUseId}: ${e.message}`;
    case 'approval_requested':
      return `[${e.seq}] tool ${e.tool} awaits approval (POST /missions/:id/tools/${e.toolUseId}/approve or /deny)`;
    case 'approval_decided':
      return `[${e.seq}] tool ${e.tool} ${e.decision} after ${e.waitedMs} ms${e.reason ? `: ${e.reason}` : ''}`;
    case 'embed':
      return `[${e.seq}] embed ${e.embedId} ${e.status}${e.summary?.canvases ? ` (${e.summary.canvases} canvas${e.summary.canvases > 1 ? 'es' : ''})` : ''}`;
    case 'message':
      return `[${e.seq}] message ${e.messageId} delivered in turn ${e.turn}`;
    case 'budget_reached':
      return `[${e.seq}] budget reached after turn ${e.turn}: paused until it is raised (PATCH /missions/:id)`;
    case 'model_fallback':
      return `[${e.seq}] model ${e.from} unavailable (${e.reason}): turn ${e.turn} goes to ${e.to}`;
    case 'provider_wait':
      return `[${e.seq}] turn ${e.turn} waits its turn at ${e.target}'s limits (about ${Math.ceil(e.waitMs / 1000)} s)`;
    case 'context_compacted':
      return `[${e.seq}] context compacted: ${e.messages} messages before turn ${e.uptoTurn}'s reply folded into a summary`;
    case 'delegate':
      return `[${e.seq}] sub-mission ${e.childId} (${e.skill}) ${e.status}`;
    case 'client_tool_call':
      return `[${e.seq}] tool ${e.tool} waits for the caller's result until ${e.deadline} (POST /missions/:id/tools/${e.toolUseId}/result)`;
    case 'output_rejected':
      return `[${e.seq}] answer of turn ${e.turn} misses the output schema${e.retried ? ', asked again' : ''}: ${e.errors}`;
  }
}

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestStack } from '../testkit/test-stack.ts';
import { skillMd } from '../testkit/test-stack.ts';
import { startBenchStack, startMission, watchEvents } from './bench-kit.ts';
import { fmtMs, log, median, percentile, type Row } from './stats.ts';

const BENCH = 'mcp-server-latency';
const SAMPLES = 20;
const SKILLS = Number(process.env.BENCH_MCP_SKILLS ?? 500);

/**
 * Cadenza's MCP face against its REST face, on one stack (issue 34's figures): a call's start → its first progress
 * notification over MCP, against `POST /missions` → the mission's first SSE event; a client's cancel notification →
 * the workflow closed as cancelled, against `POST /missions/:id/cancel` → the same. The mission's one tool hangs, so
 * only the start and the cancel are timed. Then `tools/list`, every page, for a user with BENCH_MCP_SKILLS skills.
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'hanger', tools: ['lab.scan'], maxTurns: 2 });
  const client = new Client({ name: 'cadenza-bench', version: '1' });
  try {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.setHandler(() => ({ reply: { toolUses: [{ name: 'lab__scan', input: { target: 't' } }] } }));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    const mcp: Sample[] = [];
    const rest: Sample[] = [];
    for (let i = 0; i < SAMPLES + 1; i++) {
      const m = await overMcp(stack, key, client, i);
      const r = await overRest(stack, key, i);
      if (i === 0) continue; // warm-up
      mcp.push(m);
      rest.push(r);
    }
    log(BENCH, `${SAMPLES} calls and cancels each way; now ${SKILLS} skills`);
    for (let i = 1; i < SKILLS; i++) await stack.api.createSkill(key, skillMd({ name: `skill-${String(i).padStart(3, '0')}` }));
    const listings: number[] = [];
    let pages = 0;
    let listed = 0;
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      let cursor: string | undefined;
      [pages, listed] = [0, 0];
      do {
        const page = await client.listTools(cursor ? { cursor } : {});
        pages++;
        listed += page.tools.length;
        cursor = page.nextCursor;
      } while (cursor);
      listings.push(performance.now() - t0);
    }
    const stat = (v: number[]) => `median ${fmtMs(median(v))} · p95 ${fmtMs(percentile(v, 95))}`;
    return [
      { bench: BENCH, figure: `MCP: tools/call → first progress notification (${SAMPLES})`, value: stat(mcp.map((s) => s.firstMs)) },
      { bench: BENCH, figure: 'REST: POST /missions → first SSE event', value: stat(rest.map((s) => s.firstMs)) },
      { bench: BENCH, figure: 'MCP: cancel notification → workflow closed cancelled', value: stat(mcp.map((s) => s.cancelMs)) },
      { bench: BENCH, figure: 'REST: POST /missions/:id/cancel → workflow closed cancelled', value: stat(rest.map((s) => s.cancelMs)) },
      { bench: BENCH, figure: `MCP: tools/list, ${listed} skills in ${pages} pages (median of 10)`, value: stat(listings) },
    ];
  } finally {
    await client.close().catch(() => {});
    await stack.stop();
  }
}

type Sample = { firstMs: number; cancelMs: number };

async function overMcp(stack: TestStack, key: string, client: Client, i: number): Promise<Sample> {
  const ac = new AbortController();
  let firstAt: number | undefined;
  const t0 = Date.now();
  const call = client.callTool({ name: 'hanger', arguments: { objective: `mcp ${i}` } }, undefined, {
    signal: ac.signal,
    onprogress: () => void (firstAt ??= Date.now()),
  });
  call.catch(() => {});
  const id = await hangingMission(stack, key, `mcp ${i}`);
  while (firstAt === undefined) await new Promise((ok) => setTimeout(ok, 5));
  const sent = Date.now();
  ac.abort('bench');
  await stack
    .handle(id)
    .result()
    .catch(() => {});
  return { firstMs: firstAt - t0, cancelMs: Date.now() - sent };
}

async function overRest(stack: TestStack, key: string, i: number): Promise<Sample> {
  const t0 = Date.now();
  const id = await startMission(stack, key, 'hanger', `rest ${i}`);
  const sse = watchEvents(stack, key, id);
  const first = await sse.next(() => true);
  await hangingMission(stack, key, `rest ${i}`);
  const sent = Date.now();
  const res = await stack.api.request('POST', `/api/v1/missions/${id}/cancel`, { key });
  if (res.status !== 202) throw new Error(`cancel answered ${res.status}`);
  await stack
    .handle(id)
    .result()
    .catch(() => {});
  await sse.done.catch(() => {});
  return { firstMs: first.receivedAt - t0, cancelMs: Date.now() - sent };
}

/** The id of the mission whose objective is `objective`, once its tool call is running at the tool server. */
async function hangingMission(stack: TestStack, key: string, objective: string): Promise<string> {
  for (;;) {
    const { items } = (await stack.api.request('GET', '/api/v1/missions?limit=5', { key })).body as {
      items: Array<{ id: string; objective: string }>;
    };
    const mission = items.find((m) => m.objective === objective);
    const prefix = mission && `mission-${mission.id}/`;
    if (prefix && stack.tools.requests.some((r) => String(r.headers['idempotency-key'] ?? '').startsWith(prefix) && !r.endedAt))
      return mission.id;
    await new Promise((ok) => setTimeout(ok, 10));
  }
}

import type { TestStack } from '../testkit/test-stack.ts';
import { missionResult, startBenchStack, startMission, watchEvents, type BenchStack } from './bench-kit.ts';
import { LOAD_ENV, LOAD_TOOL, loadStep, startBackgroundLoad } from './background-load.ts';
import { fmtMs, log, maxOf, median, percentile, type Row } from './stats.ts';

const BENCH = 'cancel-latency';
const SAMPLES = 20;
/** Other missions running during the second set of samples (issue 31: a user's machine is loaded). */
const LOAD_CLIENTS = Number(process.env.BENCH_LOAD_CLIENTS ?? 50);

/** One cancel: its times from the moment it was sent, and what names it along the path (bench/path-stamps.ts). */
export type Sample = { ackMs: number; toolEndMs: number; abortMs: number; sentAt: number; requestId: string; call: string };

/**
 * Per-tool cancel: a mission whose one tool hangs; from the moment the cancel request is sent, how long until
 * (a) the SSE client receives the tool's `tool_end` and (b) the tool server sees its request aborted.
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'hanger', tools: ['lab.scan'], maxTurns: 2 }, LOAD_ENV);
  try {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.setHandler((req) =>
      req.toolNames.includes(LOAD_TOOL)
        ? loadStep(req)
        : req.allToolResults.length === 0
          ? { reply: { toolUses: [{ name: 'lab__scan', input: { target: 't' } }] } }
          : { reply: { text: 'gave up on the scan' } },
    );
    const quiet = await samples(stack, key);
    log(BENCH, `${SAMPLES} cancels measured; now with ${LOAD_CLIENTS} other missions running`);
    const load = await startBackgroundLoad(stack, key, LOAD_CLIENTS);
    const loaded = await samples(stack, key);
    const { completed, perSecond } = await load.stop();
    log(BENCH, `${SAMPLES} cancels measured under load`);
    const stat = (set: Sample[], k: 'ackMs' | 'toolEndMs' | 'abortMs') => {
      const v = set.map((s) => s[k]);
      return `median ${fmtMs(median(v))} · p95 ${fmtMs(percentile(v, 95))} · max ${fmtMs(maxOf(v))}`;
    };
    const under = `with ${LOAD_CLIENTS} other missions running`;
    return [
      { bench: BENCH, figure: `cancel sent → 202 (${SAMPLES} samples)`, value: stat(quiet, 'ackMs') },
      { bench: BENCH, figure: 'cancel sent → tool_end received on SSE', value: stat(quiet, 'toolEndMs') },
      { bench: BENCH, figure: 'cancel sent → tool server sees request aborted', value: stat(quiet, 'abortMs') },
      { bench: BENCH, figure: `${under}: cancel sent → 202`, value: stat(loaded, 'ackMs') },
      { bench: BENCH, figure: `${under}: cancel sent → tool_end received on SSE`, value: stat(loaded, 'toolEndMs') },
      { bench: BENCH, figure: `${under}: cancel sent → tool server sees request aborted`, value: stat(loaded, 'abortMs') },
      { bench: BENCH, figure: `${under}: the other missions completed meanwhile`, value: `${completed} (${perSecond.toFixed(1)}/s)` },
    ];
  } finally {
    await stack.stop();
  }
}

/** SAMPLES cancels after one that warms up. */
async function samples(stack: TestStack, key: string): Promise<Sample[]> {
  const taken: Sample[] = [];
  for (let i = 0; i < SAMPLES + 1; i++) {
    const s = await sample(stack, key, i);
    if (i > 0) taken.push(s);
  }
  return taken;
}

export async function sample(stack: BenchStack, key: string, i: number): Promise<Sample> {
  const id = await startMission(stack, key, 'hanger', `cancel ${i}`);
  const sse = watchEvents(stack, key, id);
  const prefix = `mission-${id}/`;
  const request = await stack.tools.request((r) => String(r.headers['idempotency-key'] ?? '').startsWith(prefix));
  const toolUseId = String(request.headers['idempotency-key']).slice(prefix.length);
  await sse.next((e) => e.type === 'tool_start'); // the relay is polling: steady state
  // A tool's heartbeats go out every 2 s (the cancel reaches it by its notification too): land anywhere in that cycle.
  await new Promise((ok) => setTimeout(ok, 200 + Math.random() * 1_000));

  const requestId = `cancel-${id}`;
  const sent = Date.now();
  const res = await stack.api.request('POST', `/api/v1/missions/${id}/tools/${toolUseId}/cancel`, {
    key,
    headers: { 'x-request-id': requestId },
  });
  const ackMs = Date.now() - sent;
  if (res.status !== 202) throw new Error(`cancel answered ${res.status}: ${JSON.stringify(res.body)}`);
  const end = await sse.next((e) => e.type === 'tool_end');
  await stack.tools.waitFor(() => request.endedAt !== undefined);
  if (end.event.type !== 'tool_end' || end.event.status !== 'cancelled') throw new Error(`tool ended ${JSON.stringify(end.event)}`);
  if (!request.aborted) throw new Error('the tool server did not see its request aborted');
  await missionResult(stack, id);
  await sse.done;
  return { ackMs, toolEndMs: end.receivedAt - sent, abortMs: request.endedAt! - sent, sentAt: sent, requestId, call: `${id}/${toolUseId}` };
}

import type { TestStack } from '../testkit/test-stack.ts';
import { startBenchStack, startMission, watchEvents } from './bench-kit.ts';
import { fmtMs, log, maxOf, median, percentile, type Row } from './stats.ts';

const BENCH = 'interrupt-latency';
const SAMPLES = 20;

type Sample = { ackMs: number; abortMs: number; nextMs: number };

/**
 * A message with `mode: "interrupt"` to a mission whose model call hangs: from the moment the request is sent, how long
 * until (a) its 202, (b) the model server sees the call in flight aborted and (c) the model server receives the next
 * call, the one that carries the message. The interrupt lands at a random point 0.2–1.2 s into the call (the model
 * activity heartbeats every 2 s: without the announcement the abort would wait for the next beat).
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'talker', tools: [], maxTurns: 2 });
  try {
    stack.model.setHandler((req) =>
      req.lastUserText.includes('now') ? { reply: { text: 'as you say' } } : { reply: { text: 'late' }, delayMs: 60_000 },
    );
    const samples: Sample[] = [];
    for (let i = 0; i < SAMPLES + 1; i++) {
      const s = await sample(stack, key, i);
      if (i > 0) samples.push(s); // the first one warms up
    }
    log(BENCH, `${SAMPLES} interrupts measured`);
    const stat = (k: keyof Sample) => describe(samples.map((s) => s[k]));
    // Queued: the call in flight answers after 1 s; the message, sent 0.2–0.8 s into it, rides the next call.
    stack.model.setHandler((req) =>
      req.lastUserText.includes('queued') ? { reply: { text: 'noted' } } : { reply: { text: 'first answer' }, delayMs: 1_000 },
    );
    const queued: number[] = [];
    for (let i = 0; i < SAMPLES + 1; i++) {
      const ms = await queuedSample(stack, key, i);
      if (i > 0) queued.push(ms);
    }
    return [
      {
        bench: BENCH,
        figure: `queued message: the running call answers → the next call (carrying it) arrives (${SAMPLES} samples)`,
        value: describe(queued),
      },
      { bench: BENCH, figure: `interrupt sent → 202 (${SAMPLES} samples)`, value: stat('ackMs') },
      { bench: BENCH, figure: 'interrupt sent → model server sees the call aborted', value: stat('abortMs') },
      { bench: BENCH, figure: 'interrupt sent → the next model call (carrying the message) arrives', value: stat('nextMs') },
    ];
  } finally {
    await stack.stop();
  }
}

const describe = (v: number[]) => `median ${fmtMs(median(v))} · p95 ${fmtMs(percentile(v, 95))} · max ${fmtMs(maxOf(v))}`;

/** A message queued while the model call runs: from the end of that call's answer to the next call's arrival. */
async function queuedSample(stack: TestStack, key: string, i: number): Promise<number> {
  const before = stack.model.requests.length;
  const id = await startMission(stack, key, 'talker', `queue ${i}`);
  await stack.model.waitFor(() => stack.model.requests.length > before);
  const running = stack.model.requests[before]!;
  await new Promise((ok) => setTimeout(ok, 200 + Math.random() * 600));
  const res = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: { text: 'queued note' } });
  if (res.status !== 202) throw new Error(`message answered ${res.status}: ${JSON.stringify(res.body)}`);
  await stack.model.waitFor(() => stack.model.requests.length > before + 1);
  const next = stack.model.requests[before + 1]!;
  if (!next.lastUserText.includes('queued note')) throw new Error(`the next call did not carry the message: ${next.lastUserText}`);
  await stack.handle(id).result();
  return next.receivedAt - running.finishedAt!;
}

async function sample(stack: TestStack, key: string, i: number): Promise<Sample> {
  const before = stack.model.requests.length;
  const id = await startMission(stack, key, 'talker', `interrupt ${i}`);
  const sse = watchEvents(stack, key, id);
  await stack.model.waitFor(() => stack.model.requests.length > before);
  const hanging = stack.model.requests[before]!;
  await new Promise((ok) => setTimeout(ok, 200 + Math.random() * 1_000));
  const sent = Date.now();
  const res = await stack.api.request('POST', `/api/v1/missions/${id}/messages`, { key, body: { text: 'answer now', mode: 'interrupt' } });
  const ackMs = Date.now() - sent;
  if (res.status !== 202) throw new Error(`interrupt answered ${res.status}: ${JSON.stringify(res.body)}`);
  await stack.model.waitFor(() => hanging.finishedAt !== undefined && stack.model.requests.length > before + 1);
  if (!hanging.aborted) throw new Error('the model server did not see its call aborted');
  const next = stack.model.requests[before + 1]!;
  if (!next.lastUserText.includes('answer now')) throw new Error(`the next call did not carry the message: ${next.lastUserText}`);
  await stack.handle(id).result();
  await sse.done;
  return { ackMs, abortMs: hanging.finishedAt! - sent, nextMs: next.receivedAt - sent };
}

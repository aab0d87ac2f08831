import type { TestStack } from '../testkit/test-stack.ts';
import { startBenchStack, startMission, watchEvents } from './bench-kit.ts';
import { fmtMs, log, maxOf, median, type Row } from './stats.ts';

const BENCH = 'approval-latency';
const SAMPLES = 10;

type Sample = { ackMs: number; sentToToolMs: number; ackToToolMs: number };

/**
 * Human approval: a mission whose one tool (lab.wipe, `approval: required`) waits for a decision; from the moment
 * the approve request is sent, how long until (a) its 2xx answer and (b) the tool server receives the call, also
 * counted from that 2xx (the figure a person feels: "approved" → the tool is running).
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'approver', tools: ['lab.wipe'], maxTurns: 2 });
  try {
    stack.model.setHandler((req) =>
      req.allToolResults.length === 0
        ? { reply: { toolUses: [{ name: 'lab__wipe', input: { target: 't' } }] } }
        : { reply: { text: 'wiped' } },
    );
    const samples: Sample[] = [];
    for (let i = 0; i < SAMPLES + 1; i++) {
      const s = await sample(stack, key, i);
      if (i > 0) samples.push(s); // the first one warms up
    }
    log(BENCH, `${SAMPLES} approvals measured`);
    const stat = (k: keyof Sample) => `median ${fmtMs(median(samples.map((s) => s[k])))} · max ${fmtMs(maxOf(samples.map((s) => s[k])))}`;
    return [
      { bench: BENCH, figure: `approve sent → 2xx (${SAMPLES} samples)`, value: stat('ackMs') },
      { bench: BENCH, figure: 'approve 2xx → tool server receives the call', value: stat('ackToToolMs') },
      { bench: BENCH, figure: 'approve sent → tool server receives the call', value: stat('sentToToolMs') },
    ];
  } finally {
    await stack.stop();
  }
}

async function sample(stack: TestStack, key: string, i: number): Promise<Sample> {
  const id = await startMission(stack, key, 'approver', `approve ${i}`);
  const sse = watchEvents(stack, key, id);
  const requested = await sse.next((e) => e.type === 'approval_requested');
  if (requested.event.type !== 'approval_requested') throw new Error('no approval requested');
  // The pending row is written just after the event: approve once it is listed, as a person would.
  const listed = async () =>
    ((await stack.api.request('GET', '/api/v1/approvals', { key })).body.items as Array<{ missionId: string }>).some(
      (a) => a.missionId === id,
    );
  while (!(await listed())) await new Promise((ok) => setTimeout(ok, 20));
  const prefix = `mission-${id}/`;

  const sent = Date.now();
  const res = await stack.api.request('POST', `/api/v1/missions/${id}/tools/${requested.event.toolUseId}/approve`, { key });
  const acked = Date.now();
  if (res.status !== 200) throw new Error(`approve answered ${res.status}: ${JSON.stringify(res.body)}`);
  const toolAt = (await stack.tools.request((r) => String(r.headers['idempotency-key'] ?? '').startsWith(prefix))).startedAt;
  await stack.handle(id).result();
  await sse.done;
  return { ackMs: acked - sent, sentToToolMs: toolAt - sent, ackToToolMs: toolAt - acked };
}

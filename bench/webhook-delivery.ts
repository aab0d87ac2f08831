import { cpus } from 'node:os';
import { sql } from 'kysely';

import { startWebhookReceiver, type WebhookReceiver } from '../testkit/webhook-receiver.ts';
import { skillMd, type TestStack } from '../testkit/test-stack.ts';
import { startBenchStack, startMission } from './bench-kit.ts';
import { cpuMeter, formatCores } from './cpu.ts';
import { fmtMs, log, median, percentile, type Row } from './stats.ts';

const BENCH = 'webhook-delivery';
/** Missions completed one at a time for the latency figure. */
const LATENCY_MISSIONS = 30;
/** How long the receiver is down (answers 503): WEBHOOK_BENCH_OUTAGE_S, 600 by default (the 10 minutes). */
const OUTAGE_S = Number(process.env.WEBHOOK_BENCH_OUTAGE_S ?? 600);
/** Events sent during the outage, spread over it. */
const OUTAGE_EVENTS = 20;
/** Missions finishing together, each delivered to 3 endpoints: WEBHOOK_BENCH_MISSIONS, 1,000 by default. */
const BURST_MISSIONS = Number(process.env.WEBHOOK_BENCH_MISSIONS ?? 1000);
const ENDPOINTS = 3;

/**
 * Webhooks, three figures. Latency: a mission's end recorded (its delivery row's `created_at`, the recording
 * statement's clock) → the receiver on the same machine has the signed POST. Outage: a receiver answering 503 for
 * OUTAGE_S while events keep coming, then back: every event delivered, none twice under a new id, order kept, and how
 * long the backlog took after the recovery. Burst: BURST_MISSIONS missions started at once, each end delivered to 3
 * endpoints: every delivery made, how long, and the CPU used.
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'hooked', tools: [], maxTurns: 1 }, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: '127.0.0.1' });
  const receivers: WebhookReceiver[] = [];
  const receiver = async () => {
    const r = await startWebhookReceiver();
    receivers.push(r);
    return r;
  };
  try {
    stack.model.setHandler(() => ({ reply: { text: 'done' } }));
    return [
      ...(await latency(stack, key, await receiver())),
      ...(await outage(stack, key, await receiver())),
      ...(await burst(stack, key, receiver)),
    ];
  } finally {
    for (const r of receivers) await r.close();
    await stack.stop();
  }
}

async function hook(stack: TestStack, key: string, url: string): Promise<string> {
  const res = await stack.api.request('POST', '/api/v1/webhooks', { key, body: { url, events: ['mission.completed'] } });
  if (res.status !== 201) throw new Error(`webhook create answered ${res.status}`);
  return res.body.id as string;
}

const recordedAt = async (stack: TestStack, ids: string[]) =>
  new Map(
    (
      await stack.db
        .selectFrom('webhook_deliveries')
        .select(['id', sql<number>`extract(epoch from created_at) * 1000`.as('at')])
        .where('id', 'in', ids)
        .execute()
    ).map((r) => [r.id, Number(r.at)]),
  );

async function latency(stack: TestStack, key: string, r: WebhookReceiver): Promise<Row[]> {
  await hook(stack, key, r.url);
  for (let i = 0; i < LATENCY_MISSIONS; i++) {
    const id = await startMission(stack, key, 'hooked', `latency ${i}`);
    await r.waitFor((all) => all.some((x) => x.body.includes(id)));
  }
  const at = await recordedAt(
    stack,
    r.received.map((x) => x.id),
  );
  const ms = r.received.map((x) => x.receivedAt - at.get(x.id)!);
  log(BENCH, `latency: ${ms.length} deliveries`);
  return [
    {
      bench: BENCH,
      figure: `mission end recorded → webhook received (${ms.length}, one at a time): median · p95`,
      value: `${fmtMs(median(ms))} · ${fmtMs(percentile(ms, 95))}`,
    },
  ];
}

async function outage(stack: TestStack, key: string, r: WebhookReceiver): Promise<Row[]> {
  let down = true;
  r.answer(() => (down ? 503 : 200));
  const id = await hook(stack, key, r.url);
  const sent: string[] = [];
  for (let i = 0; i < OUTAGE_EVENTS; i++) {
    const res = await stack.api.request('POST', `/api/v1/webhooks/${id}/test`, { key });
    sent.push(res.body.id as string);
    await new Promise((ok) => setTimeout(ok, (OUTAGE_S * 1000) / OUTAGE_EVENTS));
  }
  down = false;
  const back = Date.now();
  log(BENCH, `outage of ${OUTAGE_S} s over; ${r.received.length} refused attempts`);
  const ok = (all: typeof r.received) => all.filter((x) => x.receivedAt >= back);
  await r.waitFor((all) => new Set(ok(all).map((x) => x.id)).size === sent.length, (OUTAGE_S + 600) * 1000);
  const delivered = ok(r.received);
  const firstSeen = [...new Set(delivered.map((x) => x.id))];
  const bodiesToIds = new Map<string, Set<string>>();
  for (const x of r.received) bodiesToIds.set(x.body, (bodiesToIds.get(x.body) ?? new Set()).add(x.id));
  const newIds = [...bodiesToIds.values()].filter((ids) => ids.size > 1).length;
  const inOrder = firstSeen.every((x, i) => x === sent[i]);
  const label = OUTAGE_S === 600 ? '10 min' : `${OUTAGE_S} s (short run)`;
  return [
    {
      bench: BENCH,
      figure: `receiver down ${label}, ${sent.length} events: delivered · sent twice under a new id · in order`,
      value: `${firstSeen.length}/${sent.length} · ${newIds} · ${inOrder ? 'yes' : 'NO'}`,
    },
    {
      bench: BENCH,
      figure: `receiver back → whole backlog received`,
      value: fmtMs(Math.max(...delivered.map((x) => x.receivedAt)) - back),
    },
  ];
}

async function burst(stack: TestStack, key: string, receiver: () => Promise<WebhookReceiver>): Promise<Row[]> {
  const endpoints = await Promise.all(Array.from({ length: ENDPOINTS }, receiver));
  // A fresh owner, so the earlier endpoints take none of these.
  const owner = await stack.api.newKey();
  await stack.api.createSkill(owner, skillMd({ name: 'hooked', tools: [], maxTurns: 1 }));
  for (const e of endpoints) await hook(stack, owner, e.url);
  const cpu = cpuMeter();
  const started = Date.now();
  for (let i = 0; i < BURST_MISSIONS; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, BURST_MISSIONS - i) }, (_, j) => startMission(stack, owner, 'hooked', `burst ${i + j}`)),
    );
  const startedS = (Date.now() - started) / 1000;
  await Promise.all(endpoints.map((e) => e.waitFor((all) => all.length >= BURST_MISSIONS, 900_000)));
  const used = cpu();
  const all = endpoints.flatMap((e) => e.received);
  const distinct = new Set(all.map((x) => x.id)).size;
  return [
    {
      bench: BENCH,
      figure: `${BURST_MISSIONS} missions (started in ${startedS.toFixed(1)} s) × ${ENDPOINTS} endpoints: deliveries made · received twice`,
      value: `${distinct}/${BURST_MISSIONS * ENDPOINTS} · ${all.length - distinct}`,
    },
    { bench: BENCH, figure: 'first start → last delivery received', value: `${((Date.now() - started) / 1000).toFixed(1)} s` },
    {
      bench: BENCH,
      figure: 'cores used meanwhile: API+worker process · Temporal · Postgres · machine',
      value: formatCores(used, cpus().length),
    },
  ];
}

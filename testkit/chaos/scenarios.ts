import { createApiClient, eventsOf } from '../api-client.ts';
import { sendHostileRequests } from '../hostile-inputs.ts';
import { scanThenAnswer } from '../outage-missions.ts';
import type { ChaosClient } from './chaos-client.ts';
import type { ProductionShape } from './production-shape.ts';
import type { ClusterService } from './temporal-cluster.ts';
import type { ToolRequest } from '../tool-server.ts';

/** One row of the chaos table. */
export type ScenarioResult = {
  scenario: string;
  started: number;
  completed: number;
  failed: number;
  /** Still `running` at the scenario's deadline. */
  stuck: number;
  fiveXx: number;
  /** Of the 5xx, the 503s (`unavailable`, the answer while a dependency is away). */
  unavailable: number;
  notes: string[];
  /** Figures a test checks (e.g. the status of the first request after a restart). */
  observed?: Record<string, number>;
};

export type ChaosContext = { shape: ProductionShape; client: ChaosClient; key: string; log: (line: string) => void };

export const CHAOS_SKILL = [
  '---',
  'name: chaos',
  'description: Scans its target, then answers.',
  'allowed-tools: lab.scan',
  'max-turns: 3',
  '---',
  'Scan the target, then report.',
  '',
].join('\n');

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** Starts `n` missions 300 ms apart; their ids, and how many starts were refused. */
async function startMissions(ctx: ChaosContext, label: string, n: number) {
  const ids: string[] = [];
  const refused: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await ctx.client.request('POST', '/api/v1/missions', {
      key: ctx.key,
      body: { skill: 'chaos', objective: `Mission ${label}-${i}`, workspaceCode: 'chaos' },
    });
    if (res.status === 202 || res.status === 200) ids.push(res.body.id as string);
    else refused.push(res.status);
    await sleep(300);
  }
  return { ids, refused };
}

/** Polls every mission once a second, as a user's client would, until all have ended or the deadline passes. */
async function awaitMissions(ctx: ChaosContext, ids: string[], deadline: number | { at: number }) {
  const end = typeof deadline === 'number' ? { at: Date.now() + deadline } : deadline;
  const status = new Map<string, string>();
  const errors: string[] = [];
  let toolErrors = 0;
  while (Date.now() < end.at && ids.some((id) => !ENDED.has(status.get(id) ?? 'running'))) {
    for (const id of ids) {
      if (ENDED.has(status.get(id) ?? 'running')) continue;
      const res = await ctx.client.request('GET', `/api/v1/missions/${id}`, { key: ctx.key });
      if (res.status !== 200) continue;
      status.set(id, res.body.status as string);
      if (res.body.status === 'failed') errors.push(`${res.body.error?.phase}: ${String(res.body.error?.message).slice(0, 80)}`);
      if (ENDED.has(res.body.status))
        toolErrors += ((res.body.tools ?? []) as Array<{ status: string }>).filter((t) => t.status === 'error').length;
    }
    await sleep(1_000);
  }
  const count = (s: string) => ids.filter((id) => status.get(id) === s).length;
  return {
    completed: count('completed'),
    failed: count('failed'),
    stuck: ids.length - count('completed') - count('failed'),
    errors,
    toolErrors,
  };
}

/**
 * What held beside the statuses: tool calls the tool server answered more than once (same idempotency key: a call
 * that had finished ran again), and each ended mission's stream read whole (a gap is an event lost, a repeated seq one
 * duplicated).
 */
async function integrity(ctx: ChaosContext, ids: string[], requests: ToolRequest[]) {
  const answered = new Map<string, number>();
  for (const r of requests) {
    const key = r.headers['idempotency-key'];
    if (typeof key === 'string' && r.endedAt !== undefined && !r.aborted) answered.set(key, (answered.get(key) ?? 0) + 1);
  }
  const answeredTwice = [...answered.values()].filter((n) => n > 1).length;
  const api = createApiClient(ctx.shape.url, ctx.shape.adminKey);
  let gaps = 0;
  let duplicates = 0;
  for (const id of ids) {
    const seqs = eventsOf((await api.readEvents(ctx.key, id)).frames).map((e) => e.seq);
    duplicates += seqs.length - new Set(seqs).size;
    for (let i = 1; i < seqs.length; i++) if (seqs[i]! > seqs[i - 1]! + 1) gaps++;
  }
  return { answeredTwice, gaps, duplicates };
}

const rowOf = (o: { completed: number; failed: number; stuck: number }) => ({ completed: o.completed, failed: o.failed, stuck: o.stuck });

/** Missions in flight through `disrupt` (which returns notes); the row says what held. */
async function throughDisruption(
  ctx: ChaosContext,
  scenario: string,
  o: { missions: number; disrupt: () => Promise<string[]>; modelDelayMs?: number; toolDelayMs?: number; deadlineMs?: number },
): Promise<ScenarioResult> {
  const { shape, client } = ctx;
  shape.model.setHandler(scanThenAnswer(o.modelDelayMs ?? 1_000));
  shape.tools.on('scan', () => ({ body: { scanned: true }, delayMs: o.toolDelayMs ?? 3_000 }));
  for (const s of [shape.api, ...shape.workers]) s.resetLog();
  client.resetTally();
  const before = shape.tools.requests.length;
  const crashesBefore = [shape.api, ...shape.workers].reduce((n, s) => n + s.crashes, 0);
  const { ids, refused } = await startMissions(ctx, scenario, o.missions);
  await shape.tools.waitFor(() => shape.tools.requests.length - before >= Math.min(2, ids.length), 120_000).catch(() => {});
  // Polled all along, the disruption included: what a user's client sees meanwhile counts too.
  const deadline = { at: Infinity };
  const polling = awaitMissions(ctx, ids, deadline);
  const notes = await o.disrupt();
  deadline.at = Date.now() + (o.deadlineMs ?? 300_000);
  const outcome = await polling;
  const held = await integrity(ctx, ids, shape.tools.requests.slice(before));
  const tally = client.resetTally();
  const waited = shape.workers.reduce((n, w) => n + w.countLog('database unreachable: waiting for it'), 0);
  const crashes = [shape.api, ...shape.workers].reduce((n, s) => n + s.crashes, 0) - crashesBefore;
  if (refused.length) notes.push(`starts refused: ${refused.join(',')}`);
  if (waited) notes.push(`activities that waited out the database: ${waited}`);
  if (crashes) notes.push(`processes that died by themselves (restarted): ${crashes}`);
  if (tally.unavailable) notes.push(`of the 5xx, 503 unavailable: ${tally.unavailable}`);
  if (tally.others.length) notes.push(`other 5xx: ${tally.others.join(' | ')}`);
  // The API's own account of its 500s, for whoever fixes them (stderr, not the table).
  for (const line of shape.api.errorLines().slice(0, 3)) ctx.log(`${scenario}: api error: ${line.slice(0, 1_500)}`);
  if (tally.noAnswer) notes.push(`requests unanswered in 30 s: ${tally.noAnswer}`);
  if (outcome.errors.length) notes.push(`failures: ${[...new Set(outcome.errors)].slice(0, 2).join(' | ')}`);
  if (outcome.toolErrors) notes.push(`tool calls the model saw fail: ${outcome.toolErrors}`);
  notes.push(`answered twice: ${held.answeredTwice}; events lost · duplicated: ${held.gaps} · ${held.duplicates}`);
  return {
    ...{ scenario, started: ids.length, ...rowOf(outcome), fiveXx: tally.fiveXx, unavailable: tally.unavailable, notes },
    observed: held,
  };
}

export function workerKills(ctx: ChaosContext, o: { missions: number; kills: number }) {
  return throughDisruption(ctx, `kill -9 worker ×${o.kills}`, {
    missions: o.missions,
    toolDelayMs: 3_000,
    async disrupt() {
      for (let k = 0; k < o.kills; k++) {
        await ctx.shape.workers[k % ctx.shape.workers.length]!.kill9AndRespawn();
        await sleep(2_500);
      }
      return [];
    },
  });
}

export async function postgresRestart(ctx: ChaosContext) {
  let firstAfter = 0;
  const row = await throughDisruption(ctx, 'postgres restart', {
    missions: 6,
    async disrupt() {
      await ctx.shape.postgres.restart();
      // The API's pooled connections all died with the server: the first request after it is back must not fail.
      firstAfter = (await ctx.client.request('GET', '/api/v1/missions?limit=1', { key: ctx.key })).status;
      return [`first request after the restart: ${firstAfter || 'no answer'}`];
    },
  });
  return { ...row, observed: { ...row.observed, firstStatusAfterRestart: firstAfter } };
}

/** An outage of `seconds`; during it, one start and one read, whose answers the notes give. */
async function outage(ctx: ChaosContext, what: string, seconds: number, stop: () => Promise<void>, start: () => Promise<void>) {
  await stop();
  const down = Date.now();
  const post = await ctx.client.request('POST', '/api/v1/missions', {
    key: ctx.key,
    body: { skill: 'chaos', objective: `Mission phantom-${what}-${seconds}`, workspaceCode: 'chaos' },
  });
  const ready = await ctx.client.request('GET', '/readyz', { key: ctx.key });
  const left = seconds * 1000 - (Date.now() - down);
  if (left > 0) await sleep(left);
  await start();
  const up = Date.now();
  let readyAgainMs = -1;
  while (Date.now() - up < 60_000) {
    const r = await ctx.client.request('GET', '/readyz', { key: ctx.key });
    if (r.status === 200) {
      readyAgainMs = Date.now() - up;
      break;
    }
    await sleep(250);
  }
  return [
    `during: POST /missions ${post.status || 'no answer'} in ${(post.ms / 1000).toFixed(1)} s, /readyz ${ready.status || 'no answer'} in ${(ready.ms / 1000).toFixed(1)} s`,
    `ready ${readyAgainMs < 0 ? 'not within 60 s' : `${(readyAgainMs / 1000).toFixed(1)} s`} after ${what} was back`,
  ];
}

/** Rows a start during an outage left behind that still claim to be running once everything else has ended. */
async function phantoms(ctx: ChaosContext, label: string): Promise<string[]> {
  const list = await ctx.client.request('GET', '/api/v1/missions?limit=100', { key: ctx.key });
  const items = (list.body?.items ?? []) as Array<{ id: string; objective: string; status: string }>;
  const mine = items.filter((m) => m.objective === `Mission ${label}`);
  if (mine.length === 0) return [];
  const ended = await awaitMissions(
    ctx,
    mine.map((m) => m.id),
    30_000,
  );
  return ended.stuck > 0 ? [`phantom missions (running, never ending): ${ended.stuck}`] : [];
}

export function postgresStop(ctx: ChaosContext, seconds: number) {
  return throughDisruption(ctx, `postgres down ${seconds} s`, {
    missions: 6,
    deadlineMs: 300_000,
    disrupt: () => outage(ctx, 'postgres', seconds, ctx.shape.postgres.stop, ctx.shape.postgres.start),
  });
}

/** One of the cluster's services killed with -9 under missions in flight, started again after `seconds`. */
export async function clusterServiceKill(ctx: ChaosContext, service: ClusterService, seconds: number) {
  const cluster = ctx.shape.cluster;
  if (!cluster) throw new Error('the cluster scenarios need the cluster: npm run chaos -- --cluster');
  const row = await throughDisruption(ctx, `kill -9 ${service}, back after ${seconds} s`, {
    missions: 6,
    deadlineMs: 300_000,
    disrupt: () =>
      outage(
        ctx,
        service,
        seconds,
        async () => cluster.kill(service),
        async () => cluster.start(service),
      ),
  });
  row.notes.push(...(await phantoms(ctx, `phantom-${service}-${seconds}`)));
  return row;
}

export function temporalRestart(ctx: ChaosContext) {
  return throughDisruption(ctx, 'temporal restart', {
    missions: 6,
    async disrupt() {
      await ctx.shape.stopTemporal();
      await ctx.shape.startTemporal();
      return [];
    },
  });
}

export async function temporalStop(ctx: ChaosContext, seconds: number) {
  const row = await throughDisruption(ctx, `temporal down ${seconds} s`, {
    missions: 6,
    deadlineMs: 300_000,
    disrupt: () => outage(ctx, 'temporal', seconds, ctx.shape.stopTemporal, ctx.shape.startTemporal),
  });
  row.notes.push(...(await phantoms(ctx, `phantom-temporal-${seconds}`)));
  return row;
}

/** Every model call answers 429 (Retry-After: 1) twice, then succeeds: each call should take exactly three attempts. */
export async function rateLimitStorm(ctx: ChaosContext): Promise<ScenarioResult> {
  const { shape } = ctx;
  const seen = new Map<string, number>();
  const answer = scanThenAnswer(200);
  const first = shape.model.requests.length;
  shape.model.setHandler((req) => {
    const call = `${/Mission ([\w-]+)/.exec(JSON.stringify(req.messages))?.[1]}/${req.allToolResults.length}`;
    const n = (seen.get(call) ?? 0) + 1;
    seen.set(call, n);
    return n <= 2 ? { status: 429, headers: { 'retry-after': '1' } } : answer(req);
  });
  shape.tools.on('scan', () => ({ body: { scanned: true }, delayMs: 200 }));
  ctx.client.resetTally();
  const { ids } = await startMissions(ctx, 'storm', 8);
  const outcome = await awaitMissions(ctx, ids, 180_000);
  const tally = ctx.client.resetTally();
  const perCall = [...seen.values()];
  const notes = [
    `${shape.model.requests.length - first} model requests for ${perCall.length} calls: attempts per call ${Math.min(...perCall)}–${Math.max(...perCall)}`,
  ];
  return {
    scenario: '429 storm (2 per call)',
    started: ids.length,
    ...rowOf(outcome),
    fiveXx: tally.fiveXx,
    unavailable: tally.unavailable,
    notes,
  };
}

/** SSE readers that drop their connection after every event and resume with Last-Event-ID: no gap, no duplicate. */
export async function sseDrops(ctx: ChaosContext): Promise<ScenarioResult> {
  const { shape } = ctx;
  shape.model.setHandler(scanThenAnswer(300));
  shape.tools.on('scan', () => ({ body: { scanned: true }, delayMs: 800 }));
  ctx.client.resetTally();
  const api = createApiClient(shape.url, shape.adminKey);
  const { ids } = await startMissions(ctx, 'sse', 5);
  let drops = 0;
  let gaps = 0;
  let duplicates = 0;
  let unterminated = 0;
  await Promise.all(
    ids.map(async (id) => {
      const seqs: number[] = [];
      let last: string | undefined;
      for (let round = 0; round < 60; round++) {
        const read = await api.readEvents(ctx.key, id, { ...(last ? { lastEventId: last } : {}), stopAfter: 1 }).catch(() => undefined);
        if (read && read.status >= 500) ctx.client.tally.fiveXx++;
        const events = read ? eventsOf(read.frames) : [];
        for (const e of events) seqs.push(e.seq);
        if (events.length > 0) last = String(events.at(-1)!.seq);
        if (events.some((e) => e.type === 'status' && e.status !== 'running')) return check(seqs);
        drops++;
      }
      unterminated++;
      check(seqs);
    }),
  );
  function check(seqs: number[]) {
    duplicates += seqs.length - new Set(seqs).size;
    for (let i = 1; i < seqs.length; i++) if (seqs[i]! > seqs[i - 1]! + 1) gaps++;
  }
  const outcome = await awaitMissions(ctx, ids, 120_000);
  const tally = ctx.client.resetTally();
  const notes = [`${drops} dropped connections resumed: ${gaps} gaps, ${duplicates} duplicates`];
  if (unterminated) notes.push(`streams without a terminal event: ${unterminated}`);
  return { scenario: 'SSE drops', started: ids.length, ...rowOf(outcome), fiveXx: tally.fiveXx, unavailable: tally.unavailable, notes };
}

export async function hostileInputs(ctx: ChaosContext): Promise<ScenarioResult> {
  const answers = await sendHostileRequests(ctx.shape.url, { user: ctx.key, admin: ctx.shape.adminKey });
  const bad = answers.filter((a) => a.status >= 500);
  const none = answers.filter((a) => a.status === 0);
  const notes = [`${answers.length} requests, ${answers.length - bad.length - none.length} answered < 500`];
  if (bad.length) notes.push(`5xx: ${byKind(bad)}`);
  if (none.length) notes.push(`no answer: ${byKind(none)}`);
  const unavailable = bad.filter((a) => a.status === 503).length;
  return { scenario: 'hostile inputs', started: 0, completed: 0, failed: 0, stuck: 0, fiveXx: bad.length, unavailable, notes };
}

/** "deep JSON → 7 endpoints" style summary: the request kinds (the part of the name before "→") with their counts. */
function byKind(answers: Array<{ name: string }>): string {
  const counts = new Map<string, number>();
  for (const a of answers) {
    const kind = a.name.split(' → ')[0]!.replace(/\d+ deep/, 'deep');
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${k} ×${n}`).join(', ');
}

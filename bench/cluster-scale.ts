import { loadavg } from 'node:os';
import pg from 'pg';
import { skillMd } from '../testkit/test-stack.ts';
import { createChaosClient } from '../testkit/chaos/chaos-client.ts';
import { startClusterScaleStack } from './cluster-scale-stack.ts';
import { scaleRows, startSampler } from './cluster-scale-figures.ts';
import { explainFailedMissions, retriedAttempts } from './cluster-scale-diagnosis.ts';
import { log, type Row } from './stats.ts';

const BENCH = 'cluster-scale';
const MISSIONS = Number(process.env.BENCH_CLUSTER_MISSIONS ?? 10_000);
const SPREAD_S = Number(process.env.BENCH_CLUSTER_SPREAD_S ?? 60);
const TOOL_S = Number(process.env.BENCH_TOOL_S ?? 60);
const DEADLINE_MIN = Number(process.env.BENCH_CLUSTER_DEADLINE_MIN ?? 30);
const APIS = 2;
const WORKERS = 3;
const USERS = 10;
const CLIENTS = 200;
/** Tries of one start answered 503 or not at all, each after the answer's Retry-After (1 s without one). */
const START_TRIES = 10;

/**
 * Issue 36 §4: N missions (BENCH_CLUSTER_MISSIONS, default 10,000) started through the API over a minute, by ten users,
 * each one model turn asking for `slow.wait` (the tool server answers after 60 s), then an answer; on the real
 * Temporal cluster (four service processes on Postgres) with two API and three worker processes. Prints what started
 * and was refused, what completed, the tool calls in flight at the peak, each worker's peak RSS, the history service's
 * CPU and RSS, Postgres's CPU, first start → last completion and the machine's load, and the attempts after the first
 * that workers started. Keeps every API and worker log line, and what explains each failed mission
 * (cluster-scale-diagnosis.ts), in files it names. Asserts nothing.
 */
export async function run(): Promise<Row[]> {
  const perUser = Math.ceil(MISSIONS / USERS);
  // Raised for the bench: the start rate allows each user's share twice over (unset it would be unlimited, but a
  // deployment sets it); tool slots so that three workers hold every call at once with room for an uneven spread.
  const raised = {
    MAX_STARTS_PER_MINUTE_PER_USER: String(perUser * 2),
    TOOL_CONCURRENCY: String(Math.max(2000, Math.ceil((MISSIONS / WORKERS) * 1.5))),
    MODEL_CONCURRENCY: '50',
  };
  // Running limits and the sticky cache pass through when set (unset: unlimited, and the default cache).
  const passed = Object.fromEntries(
    ['MAX_RUNNING_MISSIONS_PER_USER', 'MAX_RUNNING_MISSIONS_PER_TENANT', 'WORKFLOW_CACHE_SIZE'].flatMap((k) =>
      process.env[k] ? [[k, process.env[k]!]] : [],
    ),
  );
  const stack = await startClusterScaleStack((line) => log(BENCH, line), { apis: APIS, workers: WORKERS, env: { ...raised, ...passed } });
  const db = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
  let progress: NodeJS.Timeout | undefined;
  try {
    const clients = stack.apis.map((a) => createChaosClient(a.url, 60_000));
    const keys: string[] = [];
    for (let u = 0; u < USERS; u++) {
      const res = await clients[0]!.request('POST', '/api/v1/admin/keys', {
        key: stack.adminKey,
        body: {
          tenantId: 'bench',
          userId: `user-${u}`,
          capabilities: ['mission.run', 'mission.read', 'skill.read', 'skill.write', 'skill.review'],
        },
      });
      if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
      keys.push(res.body.key as string);
    }
    // A skill belongs to its author: each user authors the same one.
    for (const key of keys) {
      const skill = await clients[0]!.request('POST', '/api/v1/skills', {
        key,
        body: skillMd({ name: 'waiter', tools: ['slow.wait'], maxTurns: 2 }),
        headers: { 'content-type': 'text/markdown' },
      });
      if (skill.status !== 201) throw new Error(`skill creation failed: ${skill.status} ${JSON.stringify(skill.body)}`);
    }
    const tool = { inFlight: 0, peak: 0, peakAt: 0, calls: 0 };
    // One key per mission's call (activities/tool-activity.ts): more requests than keys are attempts run again.
    const callKeys = new Set<unknown>();
    stack.tools.on('wait', async (_input, req) => {
      tool.calls++;
      callKeys.add(req.headers['idempotency-key']);
      if (++tool.inFlight > tool.peak) [tool.peak, tool.peakAt] = [tool.inFlight, Date.now()];
      await new Promise((ok) => setTimeout(ok, TOOL_S * 1000));
      tool.inFlight--;
      return { body: { waited: TOOL_S } };
    });
    stack.model.setHandler((req) =>
      req.allToolResults.length === 0 ? { reply: { toolUses: [{ name: 'slow__wait', input: { n: 1 } }] } } : { reply: { text: 'done' } },
    );
    const sampler = startSampler(stack);
    const loadBefore = loadavg()[0]!;
    log(BENCH, `starting ${MISSIONS} missions over ${SPREAD_S} s (${USERS} users, ${APIS} APIs, ${WORKERS} workers)`);
    const t0 = Date.now();
    let next = 0;
    let started = 0;
    let ended = 0;
    let lastStartAnswered = t0;
    const refused = new Map<number, number>();
    const retried = new Map<number, number>();
    progress = setInterval(() => {
      const at = ((Date.now() - t0) / 1000).toFixed(0);
      log(BENCH, `${at} s: ${started} started, ${ended} ended, ${tool.inFlight} tool calls in flight, load ${loadavg()[0]!.toFixed(2)}`);
    }, 30_000);
    // Mission n is due at t0 + n/N of the spread; a client behind schedule sends at once.
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let n = next++; n < MISSIONS; n = next++) {
          const due = t0 + (n / MISSIONS) * SPREAD_S * 1000;
          if (due > Date.now()) await new Promise((ok) => setTimeout(ok, due - Date.now()));
          // A client as the API asks clients to be: a 503 (or no answer) is tried again after its Retry-After, with the
          // same idempotency key, so a start the API did take is not started twice. Other answers are final.
          let res: { status: number; retryAfterS?: number } = { status: 0 };
          for (let tries = 1; tries <= START_TRIES; tries++) {
            res = await clients[(n + tries - 1) % APIS]!.request('POST', '/api/v1/missions', {
              key: keys[n % USERS]!,
              body: { skill: 'waiter', objective: `Wait ${n}.`, workspaceCode: 'ws-1', idempotencyKey: `bench-${n}` },
            });
            if (res.status !== 503 && res.status !== 0) break;
            retried.set(res.status, (retried.get(res.status) ?? 0) + 1);
            if (tries < START_TRIES) await new Promise((ok) => setTimeout(ok, (res.retryAfterS ?? 1) * 1000));
          }
          lastStartAnswered = Date.now();
          if (res.status === 202) started++;
          else refused.set(res.status, (refused.get(res.status) ?? 0) + 1);
        }
      }),
    );
    log(BENCH, `${started} started, last answer after ${((lastStartAnswered - t0) / 1000).toFixed(0)} s`);
    let counts = new Map<string, number>();
    let ends: { first: number; last: number } | undefined;
    while (Date.now() < t0 + DEADLINE_MIN * 60_000) {
      const r = await db.query<{ status: string; n: string; first: Date | null; last: Date | null }>(
        'select status, count(*) as n, min(finished_at) as first, max(finished_at) as last from missions group by status',
      );
      counts = new Map(r.rows.map((row) => [row.status, Number(row.n)]));
      const times = r.rows.flatMap((row) => (row.first && row.last ? [row.first.getTime(), row.last.getTime()] : []));
      ends = times.length ? { first: Math.min(...times) - t0, last: Math.max(...times) - t0 } : undefined;
      ended = (counts.get('completed') ?? 0) + (counts.get('failed') ?? 0) + (counts.get('cancelled') ?? 0);
      if (ended >= started) break;
      await new Promise((ok) => setTimeout(ok, 5_000));
    }
    const figures = sampler.stop();
    // Why starts were refused with a 500 and why missions failed: what the run's figures alone cannot say.
    const failures = await db.query<{ phase: string | null; message: string | null; n: string }>(
      `select error->>'phase' as phase, left(error->>'message', 100) as message, count(*) as n
       from missions where status = 'failed' group by 1, 2 order by 3 desc limit 4`,
    );
    // Before the stack goes: each failed mission's activity events, model requests and log lines, in a file.
    const explained = await explainFailedMissions({
      db,
      address: stack.cluster.address,
      processLogPath: stack.processLog.path,
      workers: stack.workers,
      modelRequests: stack.model.requests,
    });
    for (const line of explained.lines) log(BENCH, line);
    log(BENCH, `attempts after the first that a worker started: ${(await retriedAttempts(stack.processLog.path)) || 'none'}`);
    log(BENCH, `failed missions explained in ${explained.path}; every process's log lines in ${stack.processLog.path}`);
    return scaleRows(BENCH, {
      missions: MISSIONS,
      spreadS: SPREAD_S,
      toolS: TOOL_S,
      started,
      refused,
      retried,
      lastStartS: (lastStartAnswered - t0) / 1000,
      counts,
      endsS: ends && { first: ends.first / 1000, last: ends.last / 1000 },
      tool: {
        ...tool,
        peakAtS: tool.peakAt ? (tool.peakAt - t0) / 1000 : undefined,
        distinct: callKeys.size,
        aborted: stack.tools.requests.filter((q) => q.aborted).length,
      },
      figures,
      loadBefore,
      settings: { ...raised, ...passed },
      errorLines: stack.workers.map((w) => w.errorLines().length),
      internalErrors: stack.apis.flatMap((a) => a.process.errorLines()),
      failures: failures.rows.map((f) => ({ phase: f.phase ?? '-', message: f.message ?? '-', n: Number(f.n) })),
      crashes: [...stack.apis.map((a) => a.process), ...stack.workers].reduce((a, s) => a + s.crashes, 0),
    });
  } finally {
    clearInterval(progress);
    await db.end();
    await stack.stop();
  }
}

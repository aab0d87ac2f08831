import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { skillMd, startTestStack } from '../testkit/test-stack.ts';
import { startService, type ServiceProcess } from '../testkit/chaos/service-process.ts';
import { cpuMeter, formatCores } from './cpu.ts';
import { mb, readProc, rssSampler } from './proc-stats.ts';
import { log, type Row } from './stats.ts';
import { freePort } from '../testkit/free-port.ts';
import { WORKER_NODE_FLAGS, WORKER_PROCESS_ENV } from '../wiring/worker-process.ts';

const BENCH = 'thousand-missions';
const MISSIONS = Number(process.env.BENCH_MISSIONS ?? 1000);
const TOOL_S = Number(process.env.BENCH_TOOL_S ?? 60);
const CLIENTS = 50;
const DEADLINE_MS = 5 * 60_000;
const APPS_DIR = fileURLToPath(new URL('./fixtures/apps', import.meta.url));

/** Where a process's memory is at one moment: RSS (from /proc) split by its JavaScript heap and external memory. */
type MemorySplit = { rss: number; heapUsed: number; heapTotal: number; external: number };

/**
 * The worker's memory split: RSS from /proc, the main thread's heap in use and reserved and its external memory
 * (Buffers, ArrayBuffers) from its /metrics; undefined when /metrics cannot be read. What is left of the RSS is native:
 * Temporal core, the workflow thread's heap, the sentence encoder, allocator pages, the binaries.
 */
async function memorySplit(port: number, pid: number): Promise<MemorySplit | undefined> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    const read = (name: string) => Number(new RegExp(`^cadenza_${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    return {
      rss: readProc(pid).rss,
      heapUsed: read('nodejs_heap_size_used_bytes'),
      heapTotal: read('nodejs_heap_size_total_bytes'),
      external: read('nodejs_external_memory_bytes'),
    };
  } catch {
    return undefined;
  }
}

const splitText = (m: MemorySplit | undefined) =>
  m
    ? `${mb(m.rss)} · ${mb(m.heapUsed)} / ${mb(m.heapTotal)} · ${mb(m.external)} · ${mb(m.rss - m.heapTotal - m.external)}`
    : '/metrics not read';

/**
 * 1,000 concurrent missions, each one model turn asking for one tool call that takes 60 s (a slow tool server), then
 * an answer, all on ONE worker process (bin/worker.ts, its own OS process, production settings); the API, the fake
 * model and the tool server run in the bench process. Prints the start rate, the peak of tool calls in flight, how
 * many completed and the worker's RSS and CPU (sampled from /proc every second).
 */
export async function run(): Promise<Row[]> {
  const stack = await startTestStack({ worker: false, env: { APPS_DIR, MODEL_CONCURRENCY: '50' } });
  let worker: ServiceProcess | undefined;
  const rows: Row[] = [];
  try {
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'waiter', tools: ['slow.wait'], maxTurns: 2 }));
    let inFlight = 0;
    let peak = 0;
    let toolCalls = 0;
    let allInFlightAt: number | undefined;
    stack.tools.on('wait', async () => {
      toolCalls++;
      if (toolCalls === MISSIONS) allInFlightAt = Date.now();
      peak = Math.max(peak, ++inFlight);
      await new Promise((ok) => setTimeout(ok, TOOL_S * 1000));
      inFlight--;
      return { body: { waited: TOOL_S } };
    });
    stack.model.setHandler((req) =>
      req.allToolResults.length === 0 ? { reply: { toolUses: [{ name: 'slow__wait', input: { n: 1 } }] } } : { reply: { text: 'done' } },
    );
    // WORKFLOW_CACHE_SIZE (and any other worker setting) from the bench's environment reaches the worker process.
    const cache = process.env.WORKFLOW_CACHE_SIZE;
    const metricsPort = await freePort();
    const workerEnv = {
      ...stack.env,
      ...WORKER_PROCESS_ENV,
      LOG_LEVEL: 'info',
      WORKER_METRICS_PORT: String(metricsPort),
      ...(cache !== undefined ? { WORKFLOW_CACHE_SIZE: cache } : {}),
    };
    // Launched as production launches it (wiring/worker-process.ts: V8 heap sizes, malloc arenas).
    worker = await startService('worker', 'worker.ts', workerEnv, 'worker running', WORKER_NODE_FLAGS);
    const pid = worker.pid!;
    const base = readProc(pid);
    const rss = rssSampler(pid);
    const idle = await memorySplit(metricsPort, pid);
    // The split at the sample with the highest RSS (every 2 s), beside the RSS peak from /proc every second.
    let atPeak: MemorySplit | undefined;
    const splitSampler = setInterval(() => {
      void memorySplit(metricsPort, pid).then((m) => {
        if (m && m.rss > (atPeak?.rss ?? 0)) atPeak = m;
      });
    }, 2_000);

    const t0 = Date.now();
    const cpu = cpuMeter();
    let next = 0;
    let refused = 0;
    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < MISSIONS) {
          const n = next++;
          const res = await stack.api.request('POST', '/api/v1/missions', {
            key,
            body: { skill: 'waiter', objective: `Wait ${n}.`, workspaceCode: 'ws-1' },
          });
          if (res.status === 202) ids.push(res.body.id);
          else refused++;
        }
      }),
    );
    const startS = (Date.now() - t0) / 1000;
    log(BENCH, `${ids.length} missions started in ${startS.toFixed(1)} s (${refused} refused)`);
    let ended = { completed: 0, failed: 0 };
    const deadline = t0 + DEADLINE_MS;
    while (Date.now() < deadline) {
      const counts = await stack.db
        .selectFrom('missions')
        .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
        .groupBy('status')
        .execute();
      const of = (s: string) => Number(counts.find((c) => c.status === s)?.n ?? 0);
      ended = { completed: of('completed'), failed: of('failed') + of('cancelled') };
      if (ended.completed + ended.failed >= ids.length) break;
      await new Promise((ok) => setTimeout(ok, 2000));
    }
    const totalS = (Date.now() - t0) / 1000;
    const used = cpu();
    const { peak: peakRss } = rss.stop();
    clearInterval(splitSampler);
    const end = readProc(pid);
    rows.push(
      {
        bench: BENCH,
        figure: `${MISSIONS} missions, ${TOOL_S} s tool each, one worker: started · refused · start rate`,
        value: `${ids.length} · ${refused} · ${(ids.length / startS).toFixed(1)}/s`,
      },
      {
        bench: BENCH,
        figure: 'peak tool calls in flight at once · every call started after',
        value: `${peak} of ${ids.length} (${toolCalls} calls) · ${allInFlightAt ? `${((allInFlightAt - t0) / 1000).toFixed(0)} s` : 'not within 5 min'}`,
      },
      {
        bench: BENCH,
        figure: 'completed · failed · first start → last end',
        value: `${ended.completed} · ${ended.failed} · ${totalS.toFixed(0)} s`,
      },
      { bench: BENCH, figure: 'worker RSS: idle · peak · at the end', value: `${mb(base.rss)} · ${mb(peakRss)} · ${mb(end.rss)}` },
      {
        bench: BENCH,
        figure: 'worker memory at idle: RSS · heap used / reserved · external · rest (native)',
        value: splitText(idle),
      },
      {
        bench: BENCH,
        figure: 'worker memory at the peak sample (every 2 s): the same',
        value: splitText(atPeak),
      },
      {
        bench: BENCH,
        figure: 'worker CPU: seconds · average cores over the run',
        value: `${(end.cpuS - base.cpuS).toFixed(1)} s · ${((end.cpuS - base.cpuS) / totalS).toFixed(2)}`,
      },
      {
        bench: BENCH,
        figure: 'CPU cores used by bench process (API, fakes) · Temporal · Postgres · machine',
        value: formatCores(used, cpus().length),
      },
      {
        bench: BENCH,
        figure: `worker error log lines (WORKFLOW_CACHE_SIZE ${cache ?? 'default'})`,
        value: String(worker.errorLines().length),
      },
    );
    return rows;
  } finally {
    await worker?.stop();
    await stack.stop();
  }
}

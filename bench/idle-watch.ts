import { fileURLToPath } from 'node:url';
import { createApiClient, type SseFrame } from '../testkit/api-client.ts';
import { freePort } from '../testkit/free-port.ts';
import { skillMd, startTestStack } from '../testkit/test-stack.ts';
import { startService, type ServiceProcess } from '../testkit/chaos/service-process.ts';
import { processCpuSeconds, threadCpuSeconds } from './cpu.ts';
import { log, type Row } from './stats.ts';

const BENCH = 'idle-watch';
const MISSIONS = Number(process.env.BENCH_MISSIONS ?? 500);
const MEASURE_S = 30;
const SETTLE_S = 15;
const APPS_DIR = fileURLToPath(new URL('./fixtures/apps', import.meta.url));

/** The figures an API process's /metrics gives, summed over labels. */
async function scrape(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (re: RegExp) => [...text.matchAll(re)].reduce((a, m) => a + Number(m[1]), 0);
  return {
    queries: sum(/^cadenza_relay_events_queries_total\{[^}]*\} (\S+)$/gm),
    gcS: sum(/^cadenza_nodejs_gc_duration_seconds_sum\{[^}]*\} (\S+)$/gm),
    heapMb: sum(/^cadenza_nodejs_heap_size_used_bytes (\S+)$/gm) / 2 ** 20,
  };
}

/** CLOCK_MONOTONIC in µs: the clock of a `--cpu-prof` profile's timestamps, so a window can be cut out of it. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * The API's cost of watching idle missions: MISSIONS missions each waiting on a tool that holds its call open for
 * longer than the bench (`slow.hold`, 600 s), each with an SSE client. The API (bin/api.ts, production settings:
 * keep-alives every 15 s) and the worker (bin/worker.ts) each run in an OS process of their own; the SSE clients,
 * the fake model and the tool server here. Over MEASURE_S seconds, from SETTLE_S after the last stream saw its
 * `tool_start`: the API process's CPU (/proc), its events queries and GC time (its /metrics), and what the clients
 * received. The relay timers are then at 10–30 s (10 s growing to 30 s while quiet); a later window cannot be had, since
 * an HTTP tool call ends after 300 s whatever its `timeout_s` (undici's default headers timeout), and the 500 missions
 * take a minute or more to start. `IDLE_WATCH_CPU_PROF=<dir>` runs the API with `--cpu-prof` into that folder and prints the window's
 * bounds for `node bench/profile-summary.ts`.
 */
export async function run(): Promise<Row[]> {
  const stack = await startTestStack({ worker: false, env: { APPS_DIR } });
  const profDir = process.env.IDLE_WATCH_CPU_PROF;
  const port = await freePort();
  let api: ServiceProcess | undefined;
  let worker: ServiceProcess | undefined;
  const streams: Array<Promise<unknown>> = [];
  const ids: string[] = [];
  try {
    const env = { ...stack.env, LOG_LEVEL: 'info', PORT: String(port) };
    api = await startService(
      'api',
      'api.ts',
      { ...env, ...(profDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}` } : {}) },
      'api listening',
    );
    worker = await startService('worker', 'worker.ts', env, 'worker running');
    const url = `http://127.0.0.1:${port}`;
    const client = createApiClient(url, stack.env.CADENZA_ADMIN_KEY!);
    const key = await client.newKey();
    await client.createSkill(key, skillMd({ name: 'idler', tools: ['slow.hold'], maxTurns: 2 }));
    stack.tools.on('hold', () => ({ hang: true }));
    stack.model.setHandler(() => ({ reply: { toolUses: [{ name: 'slow__hold', input: { n: 1 } }] } }));

    // What the clients received, by kind: counted only inside the window.
    const got = { events: 0, live: 0, keepAlives: 0 };
    let counting = false;
    const onFrame = (f: SseFrame) => {
      if (!counting) return;
      if (f.comment !== undefined) got.keepAlives += 1;
      else if (f.id !== undefined) got.events += 1;
      else got.live += 1;
    };
    const waiting: Array<Promise<void>> = [];
    for (let i = 0; i < MISSIONS; i++) {
      const { id } = await client.startMission(key, { skill: 'idler', objective: `idle ${i}` });
      ids.push(id);
      waiting.push(
        new Promise<void>((ok, fail) => {
          const stream = client
            .readEvents(key, id, {
              onFrame: (f) => {
                onFrame(f);
                if (f.event === 'tool_start') ok();
              },
            })
            .then(() => fail(new Error(`the stream of ${id} ended before its tool_start`)));
          // A stream still open when the API stops ends with a socket error: not a figure, not a crash.
          streams.push(stream.catch(() => {}));
        }),
      );
    }
    await Promise.all(waiting);
    log(BENCH, `${MISSIONS} missions waiting on their tool, each watched; settling ${SETTLE_S} s`);
    // Let the start-up settle: after the starts V8's memory reducer runs a few full GCs, a cost of the start-up.
    await new Promise((ok) => setTimeout(ok, SETTLE_S * 1_000));
    const before = await scrape(url);
    const cpuBefore = processCpuSeconds(api.pid!);
    const workerBefore = processCpuSeconds(worker.pid!);
    const threadsBefore = threadCpuSeconds(api.pid!);
    const fromUs = monotonicUs();
    counting = true;
    await new Promise((ok) => setTimeout(ok, MEASURE_S * 1_000));
    counting = false;
    const toUs = monotonicUs();
    const cpuS = processCpuSeconds(api.pid!) - cpuBefore;
    const workerS = processCpuSeconds(worker.pid!) - workerBefore;
    const threads = [...threadCpuSeconds(api.pid!)]
      .map(([name, s]) => [name, s - (threadsBefore.get(name) ?? 0)] as const)
      .filter(([, s]) => s > 0)
      .sort((a, b) => b[1] - a[1]);
    const after = await scrape(url);
    const wallS = (toUs - fromUs) / 1e6;
    const pct = (s: number) => `${((s / wallS) * 100).toFixed(1)}%`;
    const perS = (n: number) => (n / wallS).toFixed(1);
    log(BENCH, `API process CPU ${pct(cpuS)} of a core`);
    if (profDir) log(BENCH, `profile window: node bench/profile-summary.ts ${profDir}/<file>.cpuprofile ${fromUs} ${toUs}`);
    return [
      { bench: BENCH, figure: `${MISSIONS} watched idle missions: API process CPU`, value: `${pct(cpuS)} of a core` },
      {
        bench: BENCH,
        figure: 'by thread (node = JavaScript)',
        value: threads.map(([name, s]) => `${name} ${pct(s)}`).join(' · ') || '—',
      },
      {
        bench: BENCH,
        figure: 'garbage collection pauses (main thread)',
        value: `${((100 * (after.gcS - before.gcS)) / wallS).toFixed(2)}% (heap ${after.heapMb.toFixed(0)} MB)`,
      },
      { bench: BENCH, figure: 'events queries the relay asked per second', value: perS(after.queries - before.queries) },
      {
        bench: BENCH,
        figure: 'worker process CPU meanwhile (it answers the queries; its tools beat every 2 s)',
        value: `${pct(workerS)} of a core`,
      },
      {
        bench: BENCH,
        figure: 'SSE frames per second: events · live · keep-alives',
        value: `${perS(got.events)} · ${perS(got.live)} · ${perS(got.keepAlives)}`,
      },
    ];
  } finally {
    // The streams end with the API; ending the missions takes the worker a while, which is not measured.
    await Promise.all(
      ids.map((id) =>
        stack
          .handle(id)
          .cancel()
          .catch(() => {}),
      ),
    );
    await worker?.stop();
    await api?.stop();
    await Promise.all(streams);
    await stack.stop();
  }
}

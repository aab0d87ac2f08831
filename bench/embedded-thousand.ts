import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApiClient } from '../testkit/api-client.ts';
import { skillMd, startTestStack } from '../testkit/test-stack.ts';
import { freePort } from '../testkit/free-port.ts';
import { cpuMeter, formatCores } from './cpu.ts';
import { log, type Row } from './stats.ts';
import { mb, readProc, rssSampler } from './proc-stats.ts';
import { EMBEDDED_NODE_FLAGS, WORKER_PROCESS_ENV } from '../wiring/worker-process.ts';

const BENCH = 'embedded-thousand';
const MISSIONS = Number(process.env.BENCH_MISSIONS ?? 1000);
const TOOL_S = Number(process.env.BENCH_TOOL_S ?? 60);
const CLIENTS = 50;
const DEADLINE_MS = 6 * 60_000;
const APPS_DIR = fileURLToPath(new URL('./fixtures/apps', import.meta.url));
const CADENZA = fileURLToPath(new URL('../bin/cadenza.ts', import.meta.url));
const ADMIN_KEY = 'adm_embedded_bench_key_0123456789';

/**
 * Issue 31 goal 5: the embedded default at 1,000 missions. `bin/cadenza.ts` — API and worker in ONE process on PGlite
 * (no DATABASE_URL), launched as `scripts/start.sh` launches it, with its default settings — against the bench's Temporal dev
 * server, fake model and tool server; 1,000 missions (`BENCH_MISSIONS`), each one model turn asking for `slow.wait`
 * (the tool answers after 60 s, `BENCH_TOOL_S`), then an answer. Prints how many calls were in flight at once, how
 * many completed, and the process's RSS (from /proc every second) and CPU.
 */
export async function run(): Promise<Row[]> {
  const stack = await startTestStack({ worker: false, env: { APPS_DIR } });
  const dataDir = mkdtempSync(join(tmpdir(), 'cadenza-embedded-bench-'));
  const port = await freePort();
  const { DATABASE_URL: _postgres, ...withoutPostgres } = stack.env;
  // Launched as scripts/start.sh launches it.
  const child = spawn(process.execPath, [...EMBEDDED_NODE_FLAGS, CADENZA], {
    env: {
      ...process.env,
      ...WORKER_PROCESS_ENV,
      ...withoutPostgres,
      DATA_DIR: dataDir,
      PORT: String(port),
      CADENZA_ADMIN_KEY: ADMIN_KEY,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = 0;
  child.stderr!.on('data', (c: Buffer) => (errors += (c.toString().match(/"level":"error"/g) ?? []).length));
  const url = `http://127.0.0.1:${port}`;
  const rows: Row[] = [];
  try {
    for (const until = Date.now() + 120_000; ;) {
      if (child.exitCode !== null) throw new Error(`bin/cadenza.ts exited during start-up (${child.exitCode})`);
      if (
        await fetch(`${url}/readyz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (Date.now() > until) throw new Error('bin/cadenza.ts was not ready within 2 minutes');
      await new Promise((ok) => setTimeout(ok, 500));
    }
    const api = createApiClient(url, ADMIN_KEY);
    const key = await api.newKey();
    await api.createSkill(key, skillMd({ name: 'waiter', tools: ['slow.wait'], maxTurns: 2 }));
    let inFlight = 0;
    let peak = 0;
    let answered = 0;
    stack.tools.on('wait', async () => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((ok) => setTimeout(ok, TOOL_S * 1000));
      inFlight--;
      return { body: { waited: TOOL_S } };
    });
    stack.model.setHandler((req) => {
      if (req.allToolResults.length === 0) return { reply: { toolUses: [{ name: 'slow__wait', input: { n: 1 } }] } };
      answered++;
      return { reply: { text: 'done' } };
    });
    const pid = child.pid!;
    const base = readProc(pid);
    const rss = rssSampler(pid);

    const t0 = Date.now();
    const cpu = cpuMeter();
    let next = 0;
    const refused = new Map<number, number>();
    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < MISSIONS) {
          const n = next++;
          const res = await api.request('POST', '/api/v1/missions', {
            key,
            body: { skill: 'waiter', objective: `Wait ${n}.`, workspaceCode: 'ws-1' },
          });
          if (res.status === 202) ids.push(res.body.id);
          else {
            if (refused.size === 0) log(BENCH, `first refusal: ${res.status} ${JSON.stringify(res.body)}`);
            refused.set(res.status, (refused.get(res.status) ?? 0) + 1);
          }
        }
      }),
    );
    const startS = (Date.now() - t0) / 1000;
    log(BENCH, `${ids.length} missions started in ${startS.toFixed(1)} s`);
    // Ended when every mission's answer was asked for and its status is no longer running (read through the API).
    const ended = async () => {
      let done = 0;
      for (const status of ['completed', 'failed']) {
        let cursor: string | undefined;
        do {
          const res = await api.request('GET', `/api/v1/missions?status=${status}&limit=100${cursor ? `&cursor=${cursor}` : ''}`, { key });
          done += (res.body.items ?? []).length;
          cursor = res.body.nextCursor ?? undefined;
        } while (cursor);
      }
      return done;
    };
    let done = 0;
    while (Date.now() < t0 + DEADLINE_MS) {
      await new Promise((ok) => setTimeout(ok, 5_000));
      if (answered < ids.length) continue;
      done = await ended();
      if (done >= ids.length) break;
    }
    const totalS = (Date.now() - t0) / 1000;
    const used = cpu();
    const { peak: peakRss } = rss.stop();
    const end = readProc(pid);
    const failed = (await api.request('GET', `/api/v1/missions?status=failed&limit=100`, { key })).body.items?.length ?? 0;
    rows.push(
      {
        bench: BENCH,
        figure: `${MISSIONS} missions, ${TOOL_S} s tool each, embedded default (one process, PGlite): started · refused · start rate`,
        value: `${ids.length} · ${[...refused].map(([s, n]) => `${n}×${s}`).join(' ') || 0} · ${(ids.length / startS).toFixed(1)}/s`,
      },
      { bench: BENCH, figure: 'peak tool calls in flight at once (goal: all)', value: `${peak} of ${ids.length}` },
      {
        bench: BENCH,
        figure: 'ended (completed or failed) · of them failed · first start → last end',
        value: `${done} · ${failed} · ${totalS.toFixed(0)} s${done < ids.length ? ' (deadline passed)' : ''}`,
      },
      {
        bench: BENCH,
        figure: 'process RSS: idle · peak · at the end (goal: < 1.5 GB)',
        value: `${mb(base.rss)} · ${mb(peakRss)} · ${mb(end.rss)}`,
      },
      {
        bench: BENCH,
        figure: 'process CPU: seconds · average cores over the run',
        value: `${(end.cpuS - base.cpuS).toFixed(1)} s · ${((end.cpuS - base.cpuS) / totalS).toFixed(2)}`,
      },
      {
        bench: BENCH,
        figure: 'CPU cores used by bench process (fakes) · Temporal · Postgres · machine',
        value: formatCores(used, cpus().length),
      },
      { bench: BENCH, figure: 'error log lines of the process', value: String(errors) },
    );
    return rows;
  } finally {
    child.kill('SIGTERM');
    await new Promise((ok) => (child.exitCode !== null ? ok(undefined) : child.once('exit', ok)));
    rmSync(dataDir, { recursive: true, force: true });
    await stack.stop();
  }
}

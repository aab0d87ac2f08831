import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { freePort } from '../testkit/free-port.ts';
import { createTestDatabase } from '../testkit/test-database.ts';
import { LAB_APPS_DIR } from '../testkit/test-stack.ts';
import { buildZip } from '../testkit/zip-builder.ts';
import { log, type Row } from './stats.ts';

const API_BIN = fileURLToPath(new URL('../bin/api.ts', import.meta.url));
const BENCH = 'hostile-load';
/** Requests of the hostile mix, in rounds; loopback only, bounded in count and time. */
const ROUNDS = Number(process.env.HOSTILE_ROUNDS ?? 6);
const PER_ROUND = 1_000;
const CONCURRENCY = 16;
const DEADLINE_MS = 8 * 60_000;

/** Resident memory of a process in MB, from /proc (what `ps` and the issue's figures show). */
function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/** The file that appears in `dir` once `signal` was sent to the child, when it stops growing. */
async function written(child: ChildProcess, signal: NodeJS.Signals, dir: string, suffix: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  child.kill(signal);
  let size = -1;
  for (let i = 0; i < 600; i++) {
    await new Promise((r) => setTimeout(r, 200));
    const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith(suffix));
    if (!file) continue;
    const now = statSync(join(dir, file)).size;
    if (now > 0 && now === size) return join(dir, file);
    size = now;
  }
  throw new Error(`the API wrote no ${suffix} after ${signal}`);
}

/**
 * The API's own view of its memory after a full garbage collection: a heap snapshot (node --heapsnapshot-signal,
 * which collects first), then a diagnostic report (--report-on-signal) for the JavaScript heap figures. A heap that
 * grows is a leak of objects; RSS that grows while the heap does not is memory outside it (buffers, the allocator).
 */
async function heapAfterGc(child: ChildProcess, dir: string, keep: boolean): Promise<{ usedMb: number; totalMb: number }> {
  const snapshot = await written(child, 'SIGHUP', dir, '.heapsnapshot');
  if (!keep) rmSync(snapshot);
  const report = await written(child, 'SIGUSR2', dir, '.json');
  const { javascriptHeap } = JSON.parse(readFileSync(report, 'utf8')) as { javascriptHeap: { usedMemory: number; totalMemory: number } };
  rmSync(report);
  return { usedMb: javascriptHeap.usedMemory / 1024 / 1024, totalMb: javascriptHeap.totalMemory / 1024 / 1024 };
}

/** The production API process (bin/api.ts) on a fresh database, resolved once /readyz answers 200. */
async function spawnApi(env: Record<string, string>, reportDir: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const flags = ['--heapsnapshot-signal=SIGHUP', '--report-on-signal', '--report-signal=SIGUSR2', `--report-directory=${reportDir}`];
  const child = spawn(process.execPath, [...flags, API_BIN], {
    cwd: reportDir,
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-4_000)));
  process.once('exit', () => child.kill('SIGKILL'));
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the API exited with ${child.exitCode}:\n${stderr}`);
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return { child, url };
    if (Date.now() > until) throw new Error(`the API did not become ready:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

type Shot = { method: string; path: string; body?: Uint8Array | string; headers?: Record<string, string>; key?: 'user' | 'admin' | 'none' };

/** The hostile mix, one request per call: what a fuzzer throws at every endpoint. */
function hostileRequests(): Array<(n: number) => Shot> {
  const json = { 'content-type': 'application/json' };
  const md = (s: string) => `---\nname: ${s}\ndescription: Fuzz ${s}.\n---\nDo it.\n`;
  const deep = (n: number) => `{"a":${'['.repeat(n)}${']'.repeat(n)}}`;
  const nearLimit = JSON.stringify({ skill: 'x', objective: 'o'.repeat(250 * 1024), workspaceCode: 'w' });
  const overLimit = JSON.stringify({ content: 'x'.repeat(400 * 1024) });
  const gzipBomb = gzipSync(JSON.stringify({ content: ' '.repeat(8 * 1024 * 1024) }));
  const bigZip = buildZip([
    { path: 'big/SKILL.md', data: md('big') },
    { path: 'big/blob.bin', data: randomBytes(6 * 1024 * 1024) },
  ]);
  // Within every default cap (10 files of 1000 KB under 10 MB): read, unpacked, re-zipped and stored in full.
  const fullZip = buildZip([
    { path: 'full/SKILL.md', data: md('full') },
    ...Array.from({ length: 9 }, (_, i) => ({ path: `full/assets/part-${i}.bin`, data: randomBytes(1000 * 1024) })),
  ]);
  const brokenZip = Buffer.concat([buildZip([{ path: 'b/SKILL.md', data: md('b') }]).subarray(0, 60), randomBytes(200)]);
  const aliasBomb = `---\nname: bomb\ndescription: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n---\nBoom.\n`;
  return [
    (n) => ({ method: 'POST', path: '/api/v1/missions', body: deep(8_000 + (n % 5_000)), headers: json }),
    (n) => ({ method: 'PUT', path: '/api/v1/profile', body: deep(9_000 + (n % 3_000)), headers: json }),
    () => ({ method: 'POST', path: '/api/v1/missions', body: nearLimit, headers: json }),
    () => ({ method: 'POST', path: '/api/v1/memories', body: overLimit, headers: json }),
    () => ({ method: 'POST', path: '/api/v1/memories', body: gzipBomb, headers: { ...json, 'content-encoding': 'gzip' } }),
    () => ({ method: 'POST', path: '/api/v1/skills/import/zip', body: bigZip, headers: { 'content-type': 'application/zip' } }),
    () => ({ method: 'POST', path: '/api/v1/skills/import/zip', body: fullZip, headers: { 'content-type': 'application/zip' } }),
    () => ({ method: 'POST', path: '/api/v1/skills/import/zip', body: brokenZip, headers: { 'content-type': 'application/zip' } }),
    () => ({ method: 'POST', path: '/api/v1/skills', body: aliasBomb, headers: { 'content-type': 'text/markdown' } }),
    (n) => ({
      method: 'POST',
      path: '/api/v1/skills',
      body: `${md(`fuzz-${n}`)}${'\u0000'.repeat(n % 3)}`,
      headers: { 'content-type': 'text/markdown' },
    }),
    () => ({
      method: 'POST',
      path: '/api/v1/missions',
      body: 'skill=x&objective=y',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
    () => ({ method: 'POST', path: '/api/v1/missions', body: '{"skill":"x","objective":"y"}', headers: { 'content-type': 'text/plain' } }),
    (n) => ({ method: 'GET', path: `/api/v1/missions/${randomBytes(18).toString('hex')}/events?n=${n}` }),
    (n) => ({ method: 'GET', path: `/api/v1/${randomBytes(8).toString('hex')}/${n}?${'q='.repeat(50)}` }),
    (n) => ({ method: 'PATCH', path: `/api/v1/missions/${n}` }),
    () => ({ method: 'GET', path: '/api/v1/missions', key: 'none' }),
    (n) => ({
      method: 'GET',
      path: '/api/v1/skills',
      headers: { authorization: `Bearer cdz_${randomBytes(24).toString('base64url')}${n}` },
      key: 'none',
    }),
    () => ({
      method: 'POST',
      path: '/api/v1/admin/keys',
      body: '{"tenantId":"t","userId":"u","capabilities":["x"]}',
      headers: json,
      key: 'admin',
    }),
    (n) => ({ method: 'GET', path: `/api/v1/skills/discover?q=${encodeURIComponent('x'.repeat(n % 4000))}` }),
  ];
}

/** Which requests of the mix were answered with a 5xx (printed to stderr: each one is a bug). */
const fivehundreds = new Map<string, number>();

/** Sends `count` requests of the mix with CONCURRENCY in flight; counts answers by status. */
async function fire(url: string, keys: { user: string; admin: string }, count: number, offset: number, statuses: Map<number, number>) {
  const mix = hostileRequests();
  let next = 0;
  const until = Date.now() + DEADLINE_MS;
  const one = async (i: number) => {
    const shot = mix[i % mix.length]!(offset + i);
    const who = shot.key ?? 'user';
    const auth = who === 'none' ? {} : { authorization: `Bearer ${keys[who]}` };
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 15_000);
    try {
      const res = await fetch(`${url}${shot.path}`, {
        method: shot.method,
        headers: { ...auth, ...shot.headers },
        ...(shot.body !== undefined ? { body: shot.body } : {}),
        signal: ac.signal,
      });
      // SSE streams and everything else: read a little, then drop the connection, as a fuzzer does.
      await res.body?.cancel();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500)
        fivehundreds.set(
          `${shot.method} ${shot.path.slice(0, 40)}`,
          (fivehundreds.get(`${shot.method} ${shot.path.slice(0, 40)}`) ?? 0) + 1,
        );
    } catch {
      statuses.set(0, (statuses.get(0) ?? 0) + 1);
    } finally {
      clearTimeout(timer);
    }
  };
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count && Date.now() < until) await one(next++);
    }),
  );
}

const FLOOD = 24;

/** FLOOD uploads of a 9 MB zip within every cap, all sent at once, each a distinct skill. */
async function flood24(url: string, key: string, statuses: Map<number, number>): Promise<void> {
  const parts = Array.from({ length: 9 }, (_, i) => ({ path: `assets/part-${i}.bin`, data: randomBytes(1000 * 1024) }));
  await Promise.all(
    Array.from({ length: FLOOD }, async (_, n) => {
      const name = `flood-${n}-${randomBytes(3).toString('hex')}`;
      const zip = buildZip([
        { path: `${name}/SKILL.md`, data: `---\nname: ${name}\ndescription: Flood ${n}.\n---\nDo it.\n` },
        ...parts.map((p) => ({ ...p, path: `${name}/${p.path}` })),
      ]);
      const res = await fetch(`${url}/api/v1/skills/import/zip`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
        body: zip,
        signal: AbortSignal.timeout(120_000),
      }).catch(() => undefined);
      await res?.body?.cancel();
      statuses.set(res?.status ?? 0, (statuses.get(res?.status ?? 0) ?? 0) + 1);
    }),
  );
}

/**
 * Memory of the API process under a bounded hostile load (the fuzz run of issue 10): RSS after start-up and a
 * warm-up, after each round of the mix, during a flood of the largest uploads, and after 20 s idle. Steady growth
 * of the heap across rounds is a leak; RSS above a flat heap is buffers and the allocator's high-water mark.
 */
export async function run(): Promise<Row[]> {
  const temporalAddress = process.env.TEMPORAL_ADDRESS;
  if (!temporalAddress) throw new Error('TEMPORAL_ADDRESS is not set: run through scripts/bench.sh');
  const database = await createTestDatabase();
  const adminKey = `adm_${randomBytes(16).toString('hex')}`;
  // HOSTILE_SNAPSHOTS=<dir> keeps the heap snapshots there, to open in Chrome's DevTools and compare.
  const keep = process.env.HOSTILE_SNAPSHOTS;
  const reportDir = keep ?? mkdtempSync(join(tmpdir(), 'cadenza-hostile-'));
  const { child, url } = await spawnApi(
    {
      DATABASE_URL: database.url,
      TEMPORAL_ADDRESS: temporalAddress,
      TEMPORAL_TASK_QUEUE: `bench-${randomBytes(4).toString('hex')}`,
      CADENZA_ADMIN_KEY: adminKey,
      APPS_DIR: LAB_APPS_DIR,
      MODEL_API_KEY: 'unused',
      LOG_LEVEL: 'error',
    },
    reportDir,
  );
  const rows: Row[] = [];
  const row = (figure: string, value: string) => rows.push({ bench: BENCH, figure, value });
  const memory = async (pid: number) => {
    const heap = await heapAfterGc(child, reportDir, keep !== undefined);
    return `RSS ${rssMb(pid).toFixed(0)} MB, JS heap ${heap.usedMb.toFixed(0)} MB used of ${heap.totalMb.toFixed(0)} MB`;
  };
  try {
    const created = await fetch(`${url}/api/v1/admin/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        tenantId: 'fuzz',
        userId: 'fuzzer',
        capabilities: ['mission.run', 'mission.read', 'skill.read', 'skill.write', 'skill.review'],
      }),
    });
    const keys = { user: ((await created.json()) as { key: string }).key, admin: adminKey };
    const statuses = new Map<number, number>();
    await fire(url, keys, 200, 0, new Map());
    const pid = child.pid!;
    row('after start-up and 200 warm-up requests', await memory(pid));
    const started = Date.now();
    // The peak is sampled while requests are in flight: what the bodies being read cost at once.
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
    for (let r = 1; r <= ROUNDS; r++) {
      await fire(url, keys, PER_ROUND, r * PER_ROUND, statuses);
      const now = await memory(pid);
      log(BENCH, `round ${r}: ${r * PER_ROUND} requests, ${now}, peak RSS so far ${peak.toFixed(0)} MB`);
      row(`after ${r * PER_ROUND} hostile requests`, now);
    }
    clearInterval(sampler);
    row('peak RSS while under the mix', `${peak.toFixed(0)} MB`);
    const seconds = (Date.now() - started) / 1000;
    // A flood of the largest uploads the caps allow, all at once: what bounds memory is how many are in flight.
    peak = 0;
    const flood = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
    const floodStatuses = new Map<number, number>();
    await flood24(url, keys.user, floodStatuses);
    clearInterval(flood);
    row(`peak RSS during ${FLOOD} zip uploads of 9 MB, ${FLOOD} at once`, `${peak.toFixed(0)} MB`);
    row('their answers by status', [...floodStatuses.entries()].map(([st, n]) => `${st || 'no answer'}: ${n}`).join(', '));
    row('after the flood', await memory(pid));
    await new Promise((ok) => setTimeout(ok, 20_000));
    row('after 20 s idle', await memory(pid));
    row('requests/s under the mix', ((ROUNDS * PER_ROUND) / seconds).toFixed(0));
    const byStatus = [...statuses.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s || 'no answer'}: ${n}`);
    row('answers by status', byStatus.join(', '));
    for (const [what, n] of fivehundreds) log(BENCH, `5xx x${n}: ${what}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((ok) => child.once('exit', ok));
    await database.drop();
    if (!keep) rmSync(reportDir, { recursive: true, force: true });
  }
  return rows;
}

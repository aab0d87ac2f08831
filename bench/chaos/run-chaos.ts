import { createChaosClient } from '../../testkit/chaos/chaos-client.ts';
import { startProductionShape, WORKER_PER_QUEUE } from '../../testkit/chaos/production-shape.ts';
import {
  CHAOS_SKILL,
  clusterServiceKill,
  hostileInputs,
  postgresRestart,
  postgresStop,
  rateLimitStorm,
  sseDrops,
  temporalRestart,
  temporalStop,
  workerKills,
  type ChaosContext,
  type ScenarioResult,
} from '../../testkit/chaos/scenarios.ts';

// `npm run chaos` (scripts/chaos.sh): the production shape, then every scenario in turn, then the table of what held.
// `--quick` shortens the outages to 5 s and the kill storm to 2 kills (a few minutes); scenario names pick some.
const SCENARIOS: Record<string, (ctx: ChaosContext, quick: boolean) => Promise<ScenarioResult[]>> = {
  'worker-kill': async (ctx, quick) => [await workerKills(ctx, quick ? { missions: 6, kills: 2 } : { missions: 16, kills: 8 })],
  'postgres-restart': async (ctx) => [await postgresRestart(ctx)],
  'postgres-stop': async (ctx, quick) => {
    const rows: ScenarioResult[] = [];
    for (const s of quick ? [5] : [5, 30, 120]) rows.push(await postgresStop(ctx, s));
    return rows;
  },
  'temporal-restart': async (ctx) => [await temporalRestart(ctx)],
  'temporal-stop': async (ctx, quick) => {
    const rows: ScenarioResult[] = [];
    for (const s of quick ? [5] : [5, 30, 120]) rows.push(await temporalStop(ctx, s));
    return rows;
  },
  '429-storm': async (ctx) => [await rateLimitStorm(ctx)],
  'sse-drops': async (ctx) => [await sseDrops(ctx)],
  'hostile-inputs': async (ctx) => [await hostileInputs(ctx)],
};
// With `--cluster` (the real Temporal server, four service processes on the shape's Postgres): each service killed with
// -9 and started again after 10 s (quick) or 10 and 30 s, then Postgres restarted under both Temporal and Cadenza.
const clusterKill =
  (service: 'history' | 'matching' | 'frontend') =>
  async (ctx: ChaosContext, quick: boolean): Promise<ScenarioResult[]> => {
    const rows: ScenarioResult[] = [];
    for (const s of quick ? [10] : [10, 30]) rows.push(await clusterServiceKill(ctx, service, s));
    return rows;
  };
const CLUSTER_SCENARIOS: Record<string, (ctx: ChaosContext, quick: boolean) => Promise<ScenarioResult[]>> = {
  'history-kill': clusterKill('history'),
  'matching-kill': clusterKill('matching'),
  'frontend-kill': clusterKill('frontend'),
  'postgres-restart': SCENARIOS['postgres-restart']!,
  'worker-kill': SCENARIOS['worker-kill']!,
};

const log = (line: string) => process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const onCluster = args.includes('--cluster');
  const scenarios = onCluster ? CLUSTER_SCENARIOS : SCENARIOS;
  const wanted = args.filter((a) => a !== '--quick' && a !== '--cluster');
  const unknown = wanted.filter((n) => !(n in scenarios));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${Object.keys(scenarios).join(', ')}`);
  const names = wanted.length ? wanted : Object.keys(scenarios);
  const began = Date.now();
  // On the cluster, production's counts: two APIs, a worker per task queue, the frontend over TLS.
  const shape = await startProductionShape(log, onCluster ? { cluster: { tls: true }, apis: 2, workers: WORKER_PER_QUEUE } : {});
  // Interrupted: stop every process this run started (the cluster, the dev server, the API, the workers) first.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void shape.stop().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143)));
  }
  const rows: ScenarioResult[] = [];
  try {
    const client = createChaosClient(shape.url);
    const keyRes = await client.request('POST', '/api/v1/admin/keys', {
      key: shape.adminKey,
      body: {
        tenantId: 'chaos',
        userId: 'chaos',
        capabilities: ['mission.run', 'mission.read', 'skill.read', 'skill.write', 'skill.review'],
      },
    });
    if (keyRes.status !== 201) throw new Error(`key creation failed: ${keyRes.status} ${JSON.stringify(keyRes.body)}`);
    const key = keyRes.body.key as string;
    const skill = await client.request('POST', '/api/v1/skills', { key, body: CHAOS_SKILL, headers: { 'content-type': 'text/markdown' } });
    if (skill.status !== 201) throw new Error(`skill creation failed: ${skill.status} ${JSON.stringify(skill.body)}`);
    const ctx: ChaosContext = { shape, client, key, log };
    for (const name of names) {
      log(`scenario ${name}`);
      for (const row of await scenarios[name]!(ctx, quick)) {
        rows.push(row);
        log(`  ${row.scenario}: ${row.completed}/${row.started} completed, ${row.failed} failed, ${row.stuck} stuck, ${row.fiveXx} 5xx`);
      }
    }
  } finally {
    await shape.stop();
  }
  process.stdout.write(formatChaosTable(rows));
  const where = onCluster
    ? 'the Temporal cluster (4 services on Postgres, TLS; 2 APIs, a worker per task queue)'
    : 'the Temporal dev server';
  process.stdout.write(`\n${quick ? 'quick' : 'full'} run on ${where}, ${((Date.now() - began) / 60_000).toFixed(1)} min\n`);
  return 0;
}

/** The table of what held: one line per scenario. */
export function formatChaosTable(rows: ScenarioResult[]): string {
  const head = ['scenario', 'started', 'completed', 'failed', 'stuck', '5xx', 'notes'];
  const cells = rows.map((r) => [r.scenario, r.started, r.completed, r.failed, r.stuck, r.fiveXx, r.notes.join('; ') || '-'].map(String));
  const widths = head.slice(0, -1).map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => '| ' + c.map((v, i) => (i < widths.length ? v.padEnd(widths[i]!) : v)).join(' | ') + ' |\n';
  return line(head) + line(head.map((_, i) => (i < widths.length ? '-'.repeat(widths[i]!) : '---'))) + cells.map(line).join('');
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`chaos run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);

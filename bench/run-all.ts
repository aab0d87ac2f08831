import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveTemporalCli } from '../temporal/resolve-cli.ts';
import { startDevServer, type DevServer } from '../temporal/dev-server.ts';
import { freePort } from '../testkit/free-port.ts';
import { buildWorkflowBundle } from '../worker/workflow-bundle.ts';
import { formatTable, log, markdownTable, type Row } from './stats.ts';

/** Every bench by name; each returns its rows of figures (no timed assertions). */
const BENCHES: Record<string, () => Promise<{ run(): Promise<Row[]> }>> = {
  'mission-overhead': () => import('./mission-overhead.ts'),
  throughput: () => import('./throughput.ts'),
  'cancel-latency': () => import('./cancel-latency.ts'),
  'interrupt-latency': () => import('./interrupt-latency.ts'),
  'context-compaction': () => import('./context-compaction.ts'),
  'prompt-cache': () => import('./prompt-cache.ts'),
  'model-fallback': () => import('./model-fallback.ts'),
  'provider-limits': () => import('./provider-limits.ts'),
  'mcp-cancel-latency': () => import('./mcp-cancel-latency.ts'),
  'mcp-server-latency': () => import('./mcp-server-latency.ts'),
  'approval-latency': () => import('./approval-latency.ts'),
  'event-latency': () => import('./event-latency.ts'),
  'hostile-load': () => import('./hostile-load.ts'),
  'script-factory': () => import('./script-factory.ts'),
  'thousand-missions': () => import('./thousand-missions.ts'),
  'embedded-thousand': () => import('./embedded-thousand.ts'),
  'cluster-scale': () => import('./cluster-scale.ts'),
  'token-latency': () => import('./token-latency.ts'),
  'idle-watch': () => import('./idle-watch.ts'),
  'push-vs-query': () => import('./push-vs-query.ts'),
  'baseline-vs-cadenza': () => import('./baseline-vs-cadenza.ts'),
  'tracing-overhead': () => import('./tracing-overhead.ts'),
  'session-history': () => import('./session-history.ts'),
  'webhook-delivery': () => import('./webhook-delivery.ts'),
  'eval-run': () => import('./eval-run.ts'),
  'starved-worker': () => import('./starved-worker.ts'),
  'speed-goals': () => import('./speed-goals.ts'),
  'vector-search': () => import('./vector-search.ts'),
  'workflow-task': () => import('./workflow-task.ts'),
};

/**
 * Run only when named: the real Temporal cluster and 10,000 missions take the machine for a quarter of an hour; the
 * starved worker holds a core busy on purpose for minutes; speed-goals runs again what the other benches measure, for
 * issue 31's one table; loading 120,000 memories and 10,000 skills and building their indexes takes minutes.
 */
const BY_NAME_ONLY = new Set(['cluster-scale', 'starved-worker', 'speed-goals', 'vector-search', 'workflow-task']);

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const stock = args.includes('--stock-dev-server');
  const named = args.filter((a) => a !== '--stock-dev-server');
  const wanted = named.length ? named : Object.keys(BENCHES).filter((n) => !BY_NAME_ONLY.has(n));
  const unknown = wanted.filter((n) => !(n in BENCHES));
  if (unknown.length) throw new Error(`unknown bench ${unknown.join(', ')}; known: ${Object.keys(BENCHES).join(', ')}`);
  if (!process.env.TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set: run through scripts/bench.sh');
  process.env.LOG_LEVEL = 'error';
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-bench-'));
  let server: DevServer | undefined;
  const rows: Row[] = [];
  let failed = 0;
  let temporal = '';
  try {
    // One dev server and one workflow bundle for every bench, as the test suite's global setup does.
    const external = process.env.TEMPORAL_ADDRESS;
    if (!external) {
      server = await startDevServer({ cliPath: resolveTemporalCli(), port: await freePort(), tuned: !stock });
      process.env.TEMPORAL_ADDRESS = server.address;
    }
    temporal = external ? `external Temporal at ${external}` : `dev server ${stock ? 'stock' : 'with transferProcessorMaxPollRPS=10000'}`;
    const codePath = join(dir, 'workflow-bundle.js');
    writeFileSync(codePath, (await buildWorkflowBundle()).code);
    process.env.CADENZA_TEST_BUNDLE = codePath;
    for (const name of wanted) {
      const started = Date.now();
      log(name, 'running');
      let got: Row[];
      try {
        got = await (await BENCHES[name]!()).run();
      } catch (err) {
        failed += 1;
        got = [{ bench: name, figure: 'FAILED', value: err instanceof Error ? (err.stack ?? err.message) : String(err) }];
      }
      rows.push(...got);
      log(name, `finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      // Each bench's figures as it ends, so a later bench that brings the process down loses none of them.
      console.error(formatTable(got));
    }
  } finally {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const heading = `${new Date().toISOString()} · node ${process.version} · ${cpus().length} cores · load ${load} · ${temporal} · local Postgres`;
  console.log(`\nCadenza benchmarks · ${heading}\n`);
  console.log(formatTable(rows));
  // The latest run's figures as a table bench/README.md links to: written by the bench, never by hand.
  const results = new URL('./results.md', import.meta.url);
  const ran = wanted.join(', ');
  writeFileSync(
    results,
    `# Latest bench run\n\nWritten by \`npm run bench\` (bench/run-all.ts); do not edit by hand.\n\n${heading}\n\nBenches: ${ran}\n\n${markdownTable(rows)}\n`,
  );
  console.log(`\nwrote bench/results.md`);
  return failed ? 1 : 0;
}

// Exit explicitly: the Temporal runtime keeps native handles open after the workers stopped.
main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

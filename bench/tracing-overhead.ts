import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { buildWorkflowBundle } from '../worker/workflow-bundle.ts';
import type { TestStack } from '../testkit/test-stack.ts';
import { startBenchStack, startMission } from './bench-kit.ts';
import { cpuMeter } from './cpu.ts';
import { fmtMs, log, median, type Row } from './stats.ts';

const BENCH = 'tracing-overhead';
const TURNS = 5;
const SAMPLES = 20;
const WARMUP = 2;

type Run = { e2eMs: number; cpuMs: number };

/**
 * What tracing costs a mission: missions of TURNS tool turns with a zero-latency fake model and tool, first with
 * tracing off, then with it on, exporting over OTLP/HTTP to a loopback receiver that counts what it gets. In that
 * order, not interleaved: tracing registers process-wide context (and the Anthropic SDK's spans follow it), so
 * untraced runs after it would not be untraced.
 */
export async function run(): Promise<Row[]> {
  const receiver = await startOtlpReceiver();
  try {
    // A first untraced block warms the process up (JIT, module loading, the dev server's caches); discarded.
    await measure('off (warm-up)', {});
    const off = await measure('off', {});
    const bundle = { code: (await buildWorkflowBundle({ tracing: true })).code };
    const spansBefore = receiver.spans;
    const on = await measure('on', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, bundle);
    const perMission = (n: number) => (n / (WARMUP + SAMPLES)).toFixed(1);
    const perTurn = (runs: Run[], k: keyof Run) => median(runs.map((r) => r[k] / TURNS));
    return [
      {
        bench: BENCH,
        figure: `mission per turn, API start → result (median of ${SAMPLES}, ${TURNS} turns): off / on`,
        value: `${fmtMs(perTurn(off, 'e2eMs'))} / ${fmtMs(perTurn(on, 'e2eMs'))}`,
      },
      {
        bench: BENCH,
        figure: 'CPU per turn, bench process (API, worker, fakes): off / on',
        value: `${fmtMs(perTurn(off, 'cpuMs'))} / ${fmtMs(perTurn(on, 'cpuMs'))}`,
      },
      { bench: BENCH, figure: 'spans exported per mission (OTLP/HTTP)', value: perMission(receiver.spans - spansBefore) },
      { bench: BENCH, figure: 'OTLP JSON bytes per mission', value: perMission(receiver.bytes) },
    ];
  } finally {
    await receiver.close();
  }
}

async function measure(label: string, env: Record<string, string>, workflowBundle?: { code: string }): Promise<Run[]> {
  const { stack, key } = await startBenchStack(
    { name: 'traced', tools: ['lab.lookup'], maxTurns: TURNS + 1 },
    env,
    workflowBundle ? { workflowBundle } : {},
  );
  const runs: Run[] = [];
  try {
    stack.model.setHandler((req) =>
      req.allToolResults.length < TURNS
        ? { reply: { toolUses: [{ name: 'lab__lookup', input: { q: 'x' } }] } }
        : { reply: { text: 'done' } },
    );
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      const r = await runMission(stack, key, i);
      if (i >= WARMUP) runs.push(r);
    }
    log(BENCH, `${SAMPLES} missions with tracing ${label} done`);
  } finally {
    // Stopping flushes the traced stack's last spans to the receiver.
    await stack.stop();
  }
  return runs;
}

async function runMission(stack: TestStack, key: string, i: number): Promise<Run> {
  const cpu = cpuMeter();
  const t0 = performance.now();
  const id = await startMission(stack, key, 'traced', `traced ${i}`);
  const result = await stack.handle(id).result();
  const e2eMs = performance.now() - t0;
  if (result.metrics.toolCalls !== TURNS) throw new Error(`mission made ${result.metrics.toolCalls} tool calls, expected ${TURNS}`);
  return { e2eMs, cpuMs: cpu().processS * 1000 };
}

/** A loopback OTLP/HTTP traces endpoint that counts the spans and bytes it receives, and answers 200. */
async function startOtlpReceiver() {
  const counts = { spans: 0, bytes: 0 };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      counts.bytes += Buffer.byteLength(raw);
      const body = JSON.parse(raw || '{}') as { resourceSpans?: { scopeSpans: { spans: unknown[] }[] }[] };
      for (const rs of body.resourceSpans ?? []) for (const ss of rs.scopeSpans) counts.spans += ss.spans.length;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get spans() {
      return counts.spans;
    },
    get bytes() {
      return counts.bytes;
    },
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

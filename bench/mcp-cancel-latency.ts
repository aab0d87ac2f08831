import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVERYTHING_SERVER, readRecord, RECORD_STDIO, stdioApp, writeApps } from '../testkit/mcp-servers.ts';
import { skillMd, startTestStack, type TestStack } from '../testkit/test-stack.ts';
import { until } from '../testkit/until.ts';
import type { LiveEvent } from '../contracts/events.ts';
import { fmtMs, log, maxOf, median, type Row } from './stats.ts';

const BENCH = 'mcp-cancel-latency';
const SAMPLES = 10;

type Sample = { ackMs: number; seenAfterAckMs: number; seenMs: number };

/**
 * Per-tool cancel of an MCP tool: a mission runs the everything server's long-running operation (stdio, through a
 * recorder that timestamps what the server receives); from the cancel request, how long until the 202 and until the
 * server receives `notifications/cancelled` for that call.
 */
export async function run(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cadenza-bench-mcp-'));
  const record = join(dir, 'record');
  writeApps(join(dir, 'apps'), {
    everything: stdioApp(
      'everything',
      [RECORD_STDIO, process.execPath, EVERYTHING_SERVER, 'stdio'],
      [`env: {MCP_RECORD_FILE: ${JSON.stringify(record)}}`, 'timeout_s: 120'],
    ),
  });
  const progress: Array<{ missionId: string; event: LiveEvent }> = [];
  const stack = await startTestStack({
    env: { APPS_DIR: join(dir, 'apps') },
    live: { publish: (missionId, event) => progress.push({ missionId, event }) },
  });
  try {
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'long-runner', tools: ['everything.trigger_long_running_operation'], maxTurns: 2 }));
    stack.model.setHandler((req) =>
      req.allToolResults.length === 0
        ? { reply: { toolUses: [{ name: 'everything__trigger_long_running_operation', input: { duration: 100, steps: 1000 } }] } }
        : { reply: { text: 'stopped the operation' } },
    );
    const samples: Sample[] = [];
    for (let i = 0; i < SAMPLES + 1; i++) {
      const s = await sample(stack, key, record, progress, i);
      if (i > 0) samples.push(s); // the first one warms up
    }
    log(BENCH, `${SAMPLES} cancels measured`);
    const stat = (k: keyof Sample) => `median ${fmtMs(median(samples.map((s) => s[k])))} · max ${fmtMs(maxOf(samples.map((s) => s[k])))}`;
    return [
      { bench: BENCH, figure: `cancel sent → 202 (${SAMPLES} samples)`, value: stat('ackMs') },
      { bench: BENCH, figure: '202 → MCP server receives notifications/cancelled', value: stat('seenAfterAckMs') },
      { bench: BENCH, figure: 'cancel sent → MCP server receives notifications/cancelled', value: stat('seenMs') },
    ];
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function sample(
  stack: TestStack,
  key: string,
  record: string,
  progress: Array<{ missionId: string; event: LiveEvent }>,
  i: number,
): Promise<Sample> {
  const { id } = await stack.api.startMission(key, { skill: 'long-runner', objective: `long ${i}` });
  const first = await waitValue(() => progress.find((p) => p.missionId === id && p.event.type === 'tool_progress'));
  const toolUseId = first.event.type === 'tool_progress' ? first.event.toolUseId : '';
  const callId = readRecord(record).findLast((r) => r.dir === 'in' && r.message.params?.name === 'trigger-long-running-operation')!.message
    .id;
  // A tool's heartbeats go out every 2 s (the cancel reaches it by its notification too): land anywhere in that cycle.
  await new Promise((ok) => setTimeout(ok, 200 + Math.random() * 1_000));

  const sent = Date.now();
  const res = await stack.api.request('POST', `/api/v1/missions/${id}/tools/${toolUseId}/cancel`, { key });
  const acked = Date.now();
  if (res.status !== 202) throw new Error(`cancel answered ${res.status}: ${JSON.stringify(res.body)}`);
  const seen = await waitValue(() =>
    readRecord(record).find(
      (r) => r.dir === 'in' && r.message.method === 'notifications/cancelled' && r.message.params?.requestId === callId,
    ),
  );
  await stack.handle(id).result();
  return { ackMs: acked - sent, seenAfterAckMs: seen.at - acked, seenMs: seen.at - sent };
}

async function waitValue<T>(find: () => T | undefined): Promise<T> {
  let value: T | undefined;
  await until(() => (value = find()) !== undefined, { timeoutMs: 60_000, everyMs: 10 });
  return value!;
}

import proto from '@temporalio/proto';
import { missionWorkflowId } from '../contracts/mission.ts';
import { followSession, missionRuns } from '../testkit/session-runs.ts';
import type { TestStack } from '../testkit/test-stack.ts';
import { startBenchStack } from './bench-kit.ts';
import { log, maxOf, median, type Row } from './stats.ts';

const BENCH = 'session-history';

type Chain = { runs: Array<{ events: number; bytes: number }>; ms: number };

/**
 * History bytes of a session's runs (protobuf bytes of each run's history, as Temporal stores it): a 5-exchange and a
 * 200-exchange session (fake model, one-line answers, SESSION_HISTORY_EVENTS at its default), each closed after its
 * last answer. The goal (issue 29): the 200-exchange session's largest run under 2× the 5-exchange one's history.
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'chat', tools: [], maxTurns: 2 });
  try {
    const five = await session(stack, key, 5);
    const long = await session(stack, key, 200);
    const fiveBytes = maxOf(five.runs.map((r) => r.bytes));
    const largest = maxOf(long.runs.map((r) => r.bytes));
    const row = (figure: string, value: string): Row => ({ bench: BENCH, figure, value });
    const describe = (c: Chain) =>
      `${c.runs.length} run(s) · bytes per run min ${Math.min(...c.runs.map((r) => r.bytes))} · median ${median(c.runs.map((r) => r.bytes))} · max ${maxOf(c.runs.map((r) => r.bytes))} · events per run max ${maxOf(c.runs.map((r) => r.events))} · all runs ${sum(c.runs.map((r) => r.bytes))} B · ${Math.round(c.ms)} ms`;
    return [
      row('5-exchange session', describe(five)),
      row('200-exchange session', describe(long)),
      row('200-exchange bytes per run, in chain order', long.runs.map((r) => r.bytes).join(' ')),
      row('largest run of the 200-exchange chain / the 5-exchange session (goal < 2×)', `${(largest / fiveBytes).toFixed(2)}×`),
    ];
  } finally {
    await stack.stop();
  }
}

const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);

async function session(stack: TestStack, key: string, exchanges: number): Promise<Chain> {
  stack.model.enqueue(...Array.from({ length: exchanges }, (_, i) => ({ reply: { text: `Answer ${i + 1}.` } })));
  const started = Date.now();
  const { id } = await stack.api.startMission(key, { skill: 'chat', objective: 'Keep talking.', session: true });
  const s = followSession(stack, key, id);
  await s.idle(1);
  for (let n = 2; n <= exchanges; n++) await s.exchange(`Message ${n}.`, n);
  await stack.api.request('POST', `/api/v1/missions/${id}/close`, { key });
  await stack.api.waitForEnd(key, id);
  const ms = Date.now() - started;
  await s.reading;
  log(BENCH, `${exchanges} exchanges in ${ms} ms`);
  // Visibility lists the closed chain a moment after the close.
  let listed = await missionRuns(stack.temporal, id);
  for (let i = 0; i < 50 && listed.at(-1)?.status !== 'COMPLETED'; i++) {
    await new Promise((ok) => setTimeout(ok, 200));
    listed = await missionRuns(stack.temporal, id);
  }
  const runs = [];
  for (const r of listed) {
    const history = await stack.temporal.workflow.getHandle(missionWorkflowId(id), r.runId).fetchHistory();
    runs.push({ events: history.events?.length ?? 0, bytes: proto.temporal.api.history.v1.History.encode(history).finish().length });
  }
  return { runs, ms };
}

import { spawnWorker } from '../test/helpers/worker-process.ts';
import { startBenchStack, startMission, watchEvents } from './bench-kit.ts';
import { cpuMeter } from './cpu.ts';
import { log, type Row } from './stats.ts';

const BENCH = 'idle-watch';
const MISSIONS = 500;
const MEASURE_S = 20;
const SETTLE_S = 15;

/**
 * The API's cost of watching idle missions: MISSIONS missions each waiting on a tool that does not answer, each with
 * an SSE client, the worker in a process of its own; the CPU of the API process (with the SSE clients and the fake
 * servers, which are idle too) over MEASURE_S seconds, keep-alive comments at the production default of 15 s.
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack(
    { name: 'idler', tools: ['lab.scan'], maxTurns: 2 },
    {},
    { worker: false, sseKeepAliveMs: 15_000 },
  );
  const worker = await spawnWorker(stack.env);
  const watchers: Array<ReturnType<typeof watchEvents>> = [];
  try {
    stack.tools.on('scan', () => ({ hang: true }));
    stack.model.setHandler(() => ({ reply: { toolUses: [{ name: 'lab__scan', input: { target: 't' } }] } }));
    const ids: string[] = [];
    for (let i = 0; i < MISSIONS; i++) {
      const id = await startMission(stack, key, 'idler', `idle ${i}`);
      ids.push(id);
      const watcher = watchEvents(stack, key, id);
      // A stream still open when the stack stops ends with a socket error: not a figure, not a crash.
      watcher.done.catch(() => {});
      watchers.push(watcher);
    }
    await Promise.all(watchers.map((w) => w.next((e) => e.type === 'tool_start')));
    log(BENCH, `${MISSIONS} missions waiting on their tool, each watched`);
    // Let the start-up settle: after 500 starts V8's memory reducer runs a few full GCs (~0.7 s of CPU in the first
    // ~15 s), a cost of the start-up, not of watching.
    await new Promise((ok) => setTimeout(ok, SETTLE_S * 1_000));
    const cpu = cpuMeter();
    const queriesBefore = stack.relay.queryCounts().queries;
    await new Promise((ok) => setTimeout(ok, MEASURE_S * 1_000));
    const used = cpu();
    const queriesPerS = (stack.relay.queryCounts().queries - queriesBefore) / MEASURE_S;
    const pollers = stack.relay.pollerCount();
    log(BENCH, `API process CPU ${((used.processS / used.wallS) * 100).toFixed(1)}% of a core; cancelling the missions`);
    // The streams end with the stack; ending 500 missions takes the worker a while, which is not measured.
    await Promise.all(
      ids.map((id) =>
        stack
          .handle(id)
          .cancel()
          .catch(() => {}),
      ),
    );
    return [
      {
        bench: BENCH,
        figure: `${MISSIONS} watched idle missions (${pollers} relay loops): API process CPU`,
        value: `${((used.processS / used.wallS) * 100).toFixed(1)}% of a core`,
      },
      { bench: BENCH, figure: 'events queries the relay asked per second meanwhile', value: queriesPerS.toFixed(1) },
    ];
  } finally {
    await worker.kill('SIGTERM');
    await stack.stop();
  }
}

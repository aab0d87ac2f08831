import { skillMd } from '../testkit/test-stack.ts';
import { scriptFactoryWorkflowId, type FactoryAttempt } from '../contracts/script-factory.ts';
import { startBenchStack, startMission } from './bench-kit.ts';
import { fmtMs, log, maxOf, median, type Row } from './stats.ts';

const BENCH = 'script-factory';
const RUNS = 5;
const WRONG = 4; // each factory converges on attempt WRONG + 1
const RIGHT = 'import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({"total": sum(r["amount"] for r in d["rows"])}))';
const wrong = (n: number) => `import json, sys\njson.load(sys.stdin)\nprint(json.dumps({"total": ${n}}))`;

/**
 * Time per attempt of the script factory on the fake model (zero latency): missions whose one create_script call
 * converges on its fifth attempt (four scripts that miss the postcondition, each differently, then a right one).
 * Per attempt: the model call and the sandboxed run on the sample (each timed inside its activity), their sum, and
 * the factory's wall clock (child workflow start → close on the server, / attempts), which adds Temporal's scheduling
 * and the prepare and finish steps. One warm-up run, then RUNS × 5 attempts.
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'factory-host', tools: [], maxTurns: 2 });
  try {
    await stack.api.createSkill(key, skillMd({ name: 'bench-tally', body: 'Tally rows.' }));
    const attempts: FactoryAttempt[] = [];
    const walls: number[] = [];
    for (let i = 0; i <= RUNS; i++) {
      stack.model.reset();
      stack.model.enqueueScripts(...Array.from({ length: WRONG }, (_, n) => wrong(n)), RIGHT);
      const input = {
        skill: 'bench-tally',
        name: `sum_${i}`,
        description: 'Sums the amounts.',
        sample_input: { rows: [{ amount: 2 }, { amount: 5 }] },
        expected: ['total == 7'],
      };
      stack.model.enqueue({ reply: { toolUses: [{ id: `tu_${i}`, name: 'create_script', input }] } }, { reply: { text: 'done' } });
      const id = await startMission(stack, key, 'factory-host', `factory ${i}`);
      const child = stack.temporal.workflow.getHandle(scriptFactoryWorkflowId(id, 1, `tu_${i}`));
      await stack.handle(id).result();
      const row = await stack.db
        .selectFrom('tool_calls')
        .select(['status', 'output'])
        .where('mission_id', '=', id)
        .executeTakeFirstOrThrow();
      const record = row.output as { stoppedBy: string; attempts: FactoryAttempt[] };
      if (record.stoppedBy !== 'converged' || record.attempts.length !== WRONG + 1)
        throw new Error(`factory ended ${JSON.stringify(record).slice(0, 300)}`);
      if (i === 0) continue; // warm-up
      attempts.push(...record.attempts);
      const d = await child.describe();
      walls.push((d.closeTime!.getTime() - d.startTime.getTime()) / record.attempts.length);
    }
    log(BENCH, `${attempts.length} attempts measured`);
    const stat = (xs: number[]) => `median ${fmtMs(median(xs))} · max ${fmtMs(maxOf(xs))}`;
    return [
      {
        bench: BENCH,
        figure: `model call per attempt (${attempts.length} attempts, fake model)`,
        value: stat(attempts.map((a) => a.modelMs)),
      },
      { bench: BENCH, figure: 'sandboxed run + postconditions per attempt (python)', value: stat(attempts.map((a) => a.runMs)) },
      { bench: BENCH, figure: 'attempt = model call + sandboxed run', value: stat(attempts.map((a) => a.modelMs + a.runMs)) },
      { bench: BENCH, figure: 'factory wall clock per attempt (child start → close / attempts)', value: stat(walls) },
    ];
  } finally {
    await stack.stop();
  }
}

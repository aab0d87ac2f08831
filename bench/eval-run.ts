import { buildZip } from '../testkit/zip-builder.ts';
import { startTestStack } from '../testkit/test-stack.ts';
import { until } from '../testkit/until.ts';
import { fmtMs, log, type Row } from './stats.ts';

const BENCH = 'eval-run';
const CASES = 10;
const REPEATS = 3;
// One token costs $0.000001 on the missions' model: costs are figures, not a budget that binds.
const PRICES = { 'allegro-priced': { inputPerMTok: 1, outputPerMTok: 1 } };

const SKILL_MD = [
  '---',
  'name: summariser',
  'description: Summarises a topic.',
  'allowed-tools: lab.lookup',
  '---',
  'PROCEDURE: look the topic up, then answer "Summary of <topic>".',
  '',
].join('\n');
// Cases 1–7 need the procedure (they expect "Summary of"); cases 8–10 pass either way; every other case also has a prose expectation for the grader.
const EVALS = {
  evals: Array.from({ length: CASES }, (_, i) => ({
    id: i + 1,
    prompt: `Topic t${i + 1}`,
    expectations: [
      i < 7 ? `output contains "Summary of t${i + 1}"` : 'tool_called lab.lookup',
      ...(i % 2 === 0 ? ['The answer is on topic'] : []),
    ],
  })),
};

/**
 * An eval run of 10 cases × 3 repeats (60 missions, each one tool call and two model calls, against no skill) with the
 * fake model: its wall time, pass rates with and without the skill, the delta, the cost per case, and the model calls
 * it made (mission and grader), which show that no unit ran twice.
 */
export async function run(): Promise<Row[]> {
  const stack = await startTestStack({ env: { MODEL_TIER_ALLEGRO: 'allegro-priced', MODEL_PRICES: JSON.stringify(PRICES) } });
  try {
    const key = await stack.api.newKey();
    stack.tools.on('lookup', (input) => ({ body: { topic: input.q } }));
    stack.model.setHandler((req) => {
      if (req.system.startsWith('You grade'))
        return { reply: { text: '{"expectations": [{"index": 0, "passed": true, "reason": "on topic"}]}' } };
      const topic = /Topic (t\d+)/.exec(req.lastUserText)?.[1] ?? '?';
      if (req.toolResults.length === 0) return { reply: { toolUses: [{ name: 'lab__lookup', input: { q: topic } }] } };
      return { reply: { text: req.system.includes('PROCEDURE') ? `Summary of ${topic}.` : `About ${topic}.` } };
    });
    const zip = buildZip([
      { path: 'summariser/SKILL.md', data: SKILL_MD },
      { path: 'summariser/evals/evals.json', data: JSON.stringify(EVALS) },
    ]);
    const created = await fetch(`${stack.url}/api/v1/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
      body: new Uint8Array(zip),
    }).then((r) => r.json() as Promise<{ id: string }>);
    const calls = stack.model.requests.length;
    const started = Date.now();
    const res = await stack.api.request('POST', `/api/v1/skills/${created.id}/evals`, {
      key,
      body: { version: 1, against: 'none', repeats: REPEATS, maxCostUsd: 100 },
    });
    let view = res.body;
    await until(
      async () => {
        view = (await stack.api.request('GET', `/api/v1/eval-runs/${res.body.evalRunId}`, { key })).body;
        return view.status !== 'running';
      },
      { timeoutMs: 600_000, everyMs: 200 },
    );
    const wallMs = Date.now() - started;
    const requests = stack.model.requests.slice(calls);
    const grader = requests.filter((r) => r.system.startsWith('You grade')).length;
    const missions = (await stack.db.selectFrom('missions').select('id').execute()).length;
    log(BENCH, `${view.status} in ${fmtMs(wallMs)}`);
    const row = (figure: string, value: string): Row => ({ bench: BENCH, figure, value });
    return [
      row(`eval run of ${CASES} cases × ${REPEATS} repeats × 2 sides: wall time`, fmtMs(wallMs)),
      row('pass rate with the skill / without', `${view.candidate.passRate} / ${view.baselineFigures.passRate}`),
      row('delta (± stddev over repeats)', `${view.delta.passRate} ± ${view.delta.overRepeats.stddev}`),
      row('cost per case, with / without (USD)', `${view.candidate.costPerCaseUsd} / ${view.baselineFigures.costPerCaseUsd}`),
      row('missions run (units: 60)', String(missions)),
      row('model calls: missions / grader', `${requests.length - grader} / ${grader}`),
    ];
  } finally {
    await stack.stop();
  }
}

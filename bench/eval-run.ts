import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RecordedRequest as FakeRequest } from '../fake-model/fake-model-server.ts';
import { CORPUS_DIR } from '../testkit/corpus.ts';
import { startTestStack, type TestStack } from '../testkit/test-stack.ts';
import { until } from '../testkit/until.ts';
import { buildZip } from '../testkit/zip-builder.ts';
import { fmtMs, log, type Row } from './stats.ts';

const BENCH = 'eval-run';
const REPEATS = 3;
// One token costs $0.000001 on the missions' model: costs are figures, not a budget that binds.
const PRICES = { 'allegro-priced': { inputPerMTok: 1, outputPerMTok: 1 } };
const APPS_DIR = fileURLToPath(new URL('../apps', import.meta.url));

/**
 * The three skills, each its SKILL.md read where it lives (the demo's, two of the corpus beside the repository, never
 * copied here) and its evals.json of bench/fixtures/evals/. `marker`: a phrase of the procedure's body only; the fake
 * model answers as the procedure asks when it finds it in the system prompt, and generically when not (the baseline
 * runs with no skill, so without it). `asks`: how its cases' prompts read. `reply` is that answer for a prompt, with the procedure or without.
 */
const SKILLS = [
  {
    name: 'trip-weather-brief',
    skillMd: new URL('../demo/trip-weather-brief/SKILL.md', import.meta.url),
    marker: 'lead with it',
    asks: /trip to/,
    // With the procedure: both tools, then three lines ending in advice; without: the forecast alone, one sentence.
    reply(req: FakeRequest, procedure: boolean) {
      const place = /trip to (\w+)/.exec(req.lastUserText)?.[1] ?? '?';
      if (req.toolResults.length === 0) {
        const forecast = { name: 'weather__get_forecast', input: { place, day: 'tomorrow' } };
        return { toolUses: procedure ? [forecast, { name: 'weather__get_alerts', input: { region: place } }] : [forecast] };
      }
      return { text: procedure ? `Forecast for ${place}: sunny, 24°C.\nAdvice: carry water.` : `It will be sunny in ${place}.` };
    },
  },
  {
    name: 'test-driven-development',
    skillMd: new URL('obra-superpowers/test-driven-development/SKILL.md', CORPUS_DIR),
    marker: 'NO PRODUCTION CODE WITHOUT A FAILING TEST FIRST',
    asks: /Implement a function/,
    reply: (_req: FakeRequest, procedure: boolean) => ({
      text: procedure ? 'A failing test first: expect(f(x)).toBe(y). Then the function that makes it pass.' : 'Here is the function.',
    }),
  },
  {
    name: 'web-design-guidelines',
    skillMd: new URL('vercel-labs-agent-skills/web-design-guidelines/SKILL.md', CORPUS_DIR),
    marker: 'terse `file:line` format',
    asks: /Review my UI/,
    reply(req: FakeRequest, procedure: boolean) {
      const file = /in (src\/\w+\.tsx)/.exec(req.lastUserText)?.[1] ?? 'src/x.tsx';
      return { text: procedure ? `${file}:12 button without an accessible name (rule: labels)` : `${file.slice(4)} looks fine overall.` };
    },
  },
];

/**
 * For the demo skill and two corpus skills, an eval run of their 10 cases × 3 repeats against no skill (60 missions
 * each) on the fake model: pass rate per side, the delta, cost per case, wall time, and the model calls made (mission
 * calls and grader calls against the units: no case ran twice). The fake model is scripted: what makes a pass differ
 * is only whether the skill's procedure is in its system prompt (see SKILLS); the grader passes a prose expectation
 * when the answer is the procedure's. The figures measure Cadenza's eval machinery, not a model.
 */
export async function run(): Promise<Row[]> {
  const stack = await startTestStack({
    env: { APPS_DIR, MODEL_TIER_ALLEGRO: 'allegro-priced', MODEL_PRICES: JSON.stringify(PRICES) },
  });
  const rows: Row[] = [];
  try {
    const key = await stack.api.newKey();
    stack.model.setHandler((req) => {
      if (req.system.startsWith('You grade')) {
        const procedureAnswer = /Advice:|failing test first|:\d+ /.test(req.lastUserText);
        return { reply: { text: JSON.stringify({ expectations: [{ index: 0, passed: procedureAnswer, reason: 'read the answer' }] }) } };
      }
      const skill = SKILLS.find((s) => s.asks.test(req.lastUserText));
      return { reply: skill ? skill.reply(req, req.system.includes(skill.marker)) : { text: '?' } };
    });
    for (const skill of SKILLS) rows.push(...(await evalSkill(stack, key, skill)));
  } finally {
    await stack.stop();
  }
  return rows;
}

async function evalSkill(stack: TestStack, key: string, skill: (typeof SKILLS)[number]): Promise<Row[]> {
  const evals = readFileSync(new URL(`./fixtures/evals/${skill.name}/evals.json`, import.meta.url), 'utf8');
  const zip = buildZip([
    { path: `${skill.name}/SKILL.md`, data: readFileSync(skill.skillMd, 'utf8') },
    { path: `${skill.name}/evals/evals.json`, data: evals },
  ]);
  const created = await fetch(`${stack.url}/api/v1/skills`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/zip' },
    body: new Uint8Array(zip),
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as { id: string } }));
  if (created.status !== 201) throw new Error(`${skill.name}: ${JSON.stringify(created.body)}`);
  const cases = (JSON.parse(evals) as { evals: unknown[] }).evals.length;
  const calls = stack.model.requests.length;
  const started = Date.now();
  const res = await stack.api.request('POST', `/api/v1/skills/${created.body.id}/evals`, {
    key,
    body: { version: 1, against: 'none', repeats: REPEATS, maxCostUsd: 100 },
  });
  let view = res.body;
  await until(
    async () => {
      view = (await stack.api.request('GET', `/api/v1/eval-runs/${res.body.evalRunId}`, { key })).body;
      return view.status !== 'running';
    },
    { timeoutMs: 900_000, everyMs: 250 },
  );
  const wallMs = Date.now() - started;
  const requests = stack.model.requests.slice(calls);
  const grader = requests.filter((r) => r.system.startsWith('You grade')).length;
  const units = cases * REPEATS * 2;
  const missions = new Set(
    view.cases.flatMap((c: { candidate: { missionId: string }; baseline: { missionId: string } }) => [
      c.candidate.missionId,
      c.baseline.missionId,
    ]),
  );
  log(BENCH, `${skill.name}: ${view.status} in ${fmtMs(wallMs)}`);
  const row = (figure: string, value: string): Row => ({ bench: BENCH, figure: `${skill.name}: ${figure}`, value });
  return [
    row(`${cases} cases × ${REPEATS} repeats × 2 sides, wall time`, `${fmtMs(wallMs)} (${view.status})`),
    row(
      'pass rate with the skill / without · delta ± stddev',
      `${view.candidate.passRate} / ${view.baselineFigures.passRate} · ${view.delta.passRate} ± ${view.delta.overRepeats.stddev}`,
    ),
    row('cost per case with / without (USD)', `${view.candidate.costPerCaseUsd} / ${view.baselineFigures.costPerCaseUsd}`),
    row(`missions (units ${units}) · model calls: missions / grader`, `${missions.size} · ${requests.length - grader} / ${grader}`),
  ];
}

import type { MissionEvent } from '../contracts/events.ts';
import type { Step } from '../fake-model/fake-model-types.ts';
import { eventsOf } from '../testkit/api-client.ts';
import { skillMd, startTestStack, type TestStack } from '../testkit/test-stack.ts';
import { fmtMs, log, median, percentile, type Row } from './stats.ts';

const BENCH = 'model-fallback';
const PRIMARY = 'claude-primary';
/** How long the primary is down (BENCH_FALLBACK_DOWN_S, default 60 as issue 32 sets it) and how many missions run in it. */
const DOWN_S = Number(process.env.BENCH_FALLBACK_DOWN_S ?? 60);
const MISSIONS = Number(process.env.BENCH_FALLBACK_MISSIONS ?? 20);
/** The model policy's retries take 2 s + 4 s: a call must start this much before the outage ends to spend them all in it. */
const RETRIES_S = 7;
const DOWN: Step = { status: 503, message: 'primary down (bench outage)' };

type Outcome = { status: string; elapsedMs: number; fellBack: boolean };

/**
 * The primary (Anthropic protocol) answers 503 for DOWN_S seconds; MISSIONS one-turn missions start spread over the
 * part of the outage in which a call spends all its retries inside it, each then answered by the tier's fallback
 * (`openai:gpt-backup`, the same fake server's OpenAI protocol). The same missions on a healthy primary first give the
 * baseline. Figures: missions completed and how many through the fallback; per call (a one-turn mission is one model
 * call), the extra latency against the healthy primary: the primary's retries under the real policy (2 s, then 4 s),
 * then the switch. The fake answers at once, so the figure is the orchestration's, not a provider's.
 */
export async function run(): Promise<Row[]> {
  const stack = await startTestStack({
    env: (model) => ({
      MODEL_TIER_ALLEGRO: PRIMARY,
      MODEL_TIER_ALLEGRO_FALLBACKS: 'openai:gpt-backup',
      MODEL_OPENAI_BASE_URL: model.openaiBaseUrl,
    }),
  });
  try {
    const key = await stack.api.newKey();
    await stack.api.createSkill(key, skillMd({ name: 'answer', maxTurns: 1 }));
    let downUntil = 0;
    stack.model.setHandler((r) => (r.model === PRIMARY && Date.now() < downUntil ? DOWN : { reply: { text: 'answered' } }));

    // Both batches start on the same schedule, so they meet the same contention for the model slots.
    const spreadMs = Math.max(0, DOWN_S - RETRIES_S) * 1000;
    const batch = (name: string) =>
      Promise.all(
        Array.from({ length: MISSIONS }, (_, i) => mission(stack, key, `${name} ${i}`, (spreadMs * i) / Math.max(1, MISSIONS - 1))),
      );
    log(BENCH, `${MISSIONS} missions on a healthy primary`);
    const healthy = await batch('healthy');
    log(BENCH, `primary down for ${DOWN_S} s, ${MISSIONS} missions started in it`);
    downUntil = Date.now() + DOWN_S * 1000;
    const outage = await batch('outage');

    const ms = (os: Outcome[]) => os.filter((o) => o.status === 'completed').map((o) => o.elapsedMs);
    const [h, o] = [ms(healthy), ms(outage)];
    const size = `${DOWN_S} s outage, ${MISSIONS} missions`;
    return [
      {
        bench: BENCH,
        figure: `missions completed during the outage / through the fallback (${size})`,
        value: `${o.length} of ${MISSIONS} / ${outage.filter((x) => x.fellBack).length} of ${MISSIONS}`,
      },
      {
        bench: BENCH,
        figure: `one-call mission, healthy primary: median / p95 elapsed (${size})`,
        value: `${fmtMs(median(h))} / ${fmtMs(percentile(h, 95))}`,
      },
      {
        bench: BENCH,
        figure: `one-call mission, through the fallback: median / p95 elapsed (${size})`,
        value: `${fmtMs(median(o))} / ${fmtMs(percentile(o, 95))}`,
      },
      {
        bench: BENCH,
        figure: `extra latency per call through the fallback, medians (${size}; the policy's retries are 6 s of it)`,
        value: fmtMs(median(o) - median(h)),
      },
    ];
  } finally {
    await stack.stop();
  }
}

/** One one-turn mission started after `delayMs`: its status, its elapsed time as the mission reports it, whether it fell back. */
async function mission(stack: TestStack, key: string, objective: string, delayMs: number): Promise<Outcome> {
  await new Promise((ok) => setTimeout(ok, delayMs));
  const { id } = await stack.api.startMission(key, { skill: 'answer', objective });
  const ended = await stack.api.waitForEnd(key, id, 600_000);
  const events: MissionEvent[] = eventsOf((await stack.api.readEvents(key, id)).frames);
  return {
    status: ended.status,
    elapsedMs: ended.result?.metrics.elapsedMs ?? Number.NaN,
    fellBack: events.some((e) => e.type === 'model_fallback'),
  };
}

import { ALL_CAPABILITIES } from '../testkit/api-client.ts';
import { skillMd, startTestStack } from '../testkit/test-stack.ts';
import { log, median, type Row } from './stats.ts';

const BENCH = 'provider-limits';
const MODEL = 'claude-limited';
/** Issue 32's figure: 200 missions, 60 requests per minute, 4 users; BENCH_PROVIDER_* make a short run possible. */
const MISSIONS = Number(process.env.BENCH_PROVIDER_MISSIONS ?? 200);
const RPM = Number(process.env.BENCH_PROVIDER_RPM ?? 60);
const USERS = Number(process.env.BENCH_PROVIDER_USERS ?? 4);

/**
 * One-call missions against PROVIDER_LIMITS of RPM requests per minute, the fake provider enforcing the same limit as
 * the providers do (a 429 with Retry-After past it). The users ask unevenly: the first starts half the missions at
 * once, the others theirs a second later, so a fair order shows as the late users' missions not waiting behind the
 * first one's backlog. Figures: 429s the provider sent (goal 0), missions completed (goal all), per user the median
 * rank of its missions among all completions and when its last one completed.
 */
export async function run(): Promise<Row[]> {
  const stack = await startTestStack({
    env: { MODEL_TIER_ALLEGRO: MODEL, PROVIDER_LIMITS: JSON.stringify({ [`anthropic:${MODEL}`]: { requestsPerMinute: RPM } }) },
  });
  try {
    stack.model.limitRequestsPerMinute(RPM);
    const users = await Promise.all(
      Array.from({ length: USERS }, async (_, u) => {
        const key = await stack.api.newKey(ALL_CAPABILITIES, { tenantId: 'bench', userId: `user-${u + 1}` });
        await stack.api.createSkill(key, skillMd({ name: `answer-${u + 1}`, maxTurns: 1 }));
        return key;
      }),
    );
    // The first user asks for half the missions; the others share the rest in turn.
    const half = Math.ceil(MISSIONS / 2);
    const counts = Array.from({ length: USERS }, () => 0);
    for (let i = 0; i < MISSIONS; i++) counts[i < half || USERS === 1 ? 0 : 1 + ((i - half) % (USERS - 1))]!++;
    const started = Date.now();
    const completions: Array<{ user: number; at: number; status: string }> = [];
    log(BENCH, `${MISSIONS} one-call missions, ${USERS} users, limit ${RPM} requests per minute`);
    await Promise.all(
      users.map(async (key, u) => {
        if (u > 0) await new Promise((ok) => setTimeout(ok, 1_000));
        const ids = await Promise.all(
          Array.from({ length: counts[u]! }, (_, i) =>
            stack.api.startMission(key, { skill: `answer-${u + 1}`, objective: `user ${u + 1} job ${i}` }),
          ),
        );
        await Promise.all(
          ids.map(async ({ id }) => {
            const ended = await stack.api.waitForEnd(key, id, 3_600_000);
            completions.push({ user: u + 1, at: Date.now() - started, status: ended.status });
          }),
        );
      }),
    );
    const size = `${MISSIONS} missions, ${RPM} requests/min, ${USERS} users`;
    const completed = completions.filter((c) => c.status === 'completed').length;
    const rows: Row[] = [
      { bench: BENCH, figure: `429s received from the provider (${size}; goal 0)`, value: String(stack.model.rateLimited) },
      { bench: BENCH, figure: `missions completed (${size}; goal all)`, value: `${completed} of ${MISSIONS}` },
      { bench: BENCH, figure: `all done after (${size})`, value: `${Math.round(Math.max(...completions.map((c) => c.at)) / 1000)} s` },
    ];
    for (let u = 1; u <= USERS; u++) {
      const ranks = completions.flatMap((c, i) => (c.user === u ? [i + 1] : []));
      const last = Math.max(...completions.filter((c) => c.user === u).map((c) => c.at));
      rows.push({
        bench: BENCH,
        figure: `user ${u} (${ranks.length} missions${u === 1 ? ', asked first' : ', asked 1 s later'}): median completion rank / last done at`,
        value: `${median(ranks)} of ${completions.length} / ${Math.round(last / 1000)} s`,
      });
    }
    return rows;
  } finally {
    await stack.stop();
  }
}

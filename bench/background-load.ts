import { skillMd } from '../testkit/test-stack.ts';
import { missionResult, type BenchStack } from './bench-kit.ts';

/** The skill the load's missions run: one `lab.lookup` call, then an answer. */
export const LOAD_SKILL = 'busy';
/** The model's name for the load's tool: a request offering it is a load mission's. */
export const LOAD_TOOL = 'lab__report';
/** The load's stack settings: model slots for every client, so the load is the missions' work, not a queue. */
export const LOAD_ENV = { MODEL_CONCURRENCY: '64' };

/**
 * Other missions running while a bench measures: `clients` closed loops, each starting a mission of LOAD_SKILL and
 * waiting for its end, then the next, until stopped. The caller's model handler answers a request offering LOAD_TOOL
 * with `loadStep(req)`; the tool answers after 100–400 ms, so the missions overlap at random.
 */
export async function startBackgroundLoad(stack: BenchStack, key: string, clients: number) {
  await stack.api.createSkill(key, skillMd({ name: LOAD_SKILL, tools: ['lab.report'], maxTurns: 2 }));
  stack.tools.on('report', () => ({ delayMs: 100 + Math.round(Math.random() * 300), body: { ok: true } }));
  let stopping = false;
  let completed = 0;
  const startedAt = Date.now();
  const loop = async (c: number) => {
    for (let i = 0; !stopping; i++) {
      const { id } = await stack.api.startMission(key, { skill: LOAD_SKILL, objective: `load ${c}/${i}` });
      await missionResult(stack, id);
      completed++;
    }
  };
  // A loop that fails stops them all and its error comes out of stop(), not as an unhandled rejection meanwhile.
  let failure: unknown;
  const loops = Array.from({ length: clients }, (_, c) =>
    loop(c).catch((err: unknown) => {
      failure ??= err;
      stopping = true;
    }),
  );
  return {
    /** Stops starting missions, waits for the running ones, and says how many completed per second. */
    async stop(): Promise<{ completed: number; perSecond: number }> {
      stopping = true;
      await Promise.all(loops);
      if (failure) throw failure;
      return { completed, perSecond: completed / ((Date.now() - startedAt) / 1000) };
    },
  };
}

/** A load mission's model step: the report first, then the answer. */
export const loadStep = (req: { allToolResults: unknown[] }) =>
  req.allToolResults.length === 0 ? { reply: { toolUses: [{ name: LOAD_TOOL, input: { q: 'x' } }] } } : { reply: { text: 'done' } };

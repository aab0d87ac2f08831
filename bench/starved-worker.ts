import { sql } from 'kysely';
import { starveEventLoop } from '../testkit/starve-event-loop.ts';
import { startBenchStack } from './bench-kit.ts';
import { log, type Row } from './stats.ts';

const BENCH = 'starved-worker';
const MISSIONS = Number(process.env.BENCH_MISSIONS ?? 60);
const TOOL_MS = 5_000;

/**
 * Issue 36's CPU-starved workers, made on purpose: MISSIONS missions, each one tool call answering after 5 s, then an
 * answer, on the in-process worker while this process's event loop is held in bursts (3–12 s held, 1–3 s free, from
 * the last start to the last end): what a worker on two cores at load 34 lives through. Counts what ran more than once (tool requests per
 * distinct call, model requests per turn, activity attempts beyond the first) and how the missions ended. Asserts nothing.
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'starved', tools: ['lab.scan'], maxTurns: 2 });
  let starving = true;
  try {
    const callKeys = new Map<string, number>();
    stack.tools.on('scan', async (_input, req) => {
      const k = String(req.headers['idempotency-key']);
      callKeys.set(k, (callKeys.get(k) ?? 0) + 1);
      await new Promise((ok) => setTimeout(ok, TOOL_MS));
      return { body: { scanned: true } };
    });
    stack.model.setHandler((req) =>
      req.allToolResults.length === 0
        ? { reply: { toolUses: [{ name: 'lab__scan', input: { target: 'x' } }] } }
        : { reply: { text: 'done' } },
    );
    const t0 = Date.now();
    const ids = await Promise.all(
      Array.from(
        { length: MISSIONS },
        async (_, n) => (await stack.api.startMission(key, { skill: 'starved', objective: `Scan ${n}.` })).id as string,
      ),
    );
    log(BENCH, `${ids.length} missions started; the event loop is starved in bursts until they end`);
    const starver = (async () => {
      while (starving) {
        await new Promise((ok) => setTimeout(ok, 1_000 + Math.random() * 2_000));
        if (starving) starveEventLoop(3_000 + Math.random() * 9_000);
      }
    })();
    // The bench's own read may find the starved pool busy: then nothing counts as ended yet.
    const ended = async () =>
      (
        await stack.db
          .selectFrom('missions')
          .select('status')
          .execute()
          .catch(() => [])
      ).filter((r) => ['completed', 'failed', 'cancelled'].includes(r.status));
    while ((await ended()).length < ids.length && Date.now() - t0 < 600_000) await new Promise((ok) => setTimeout(ok, 2_000));
    const wallS = (Date.now() - t0) / 1000;
    starving = false;
    await starver;
    const rows = await stack.db.selectFrom('missions').select(['status']).execute();
    const of = (s: string) => rows.filter((r) => r.status === s).length;
    // A retried activity's attempt is on its ActivityTaskStarted event: count those beyond the first, by activity type.
    const retried = new Map<string, number>();
    for (const id of ids) {
      const events = (await stack.handle(id).fetchHistory()).events ?? [];
      for (const e of events) {
        const attempt = e.activityTaskStartedEventAttributes?.attempt ?? 1;
        if (attempt <= 1) continue;
        const scheduledId = String(e.activityTaskStartedEventAttributes!.scheduledEventId);
        const type = events.find((s) => String(s.eventId) === scheduledId)?.activityTaskScheduledEventAttributes?.activityType?.name ?? '?';
        retried.set(type, (retried.get(type) ?? 0) + 1);
      }
    }
    const modelTurns = await sql<{ n: string }>`select count(*) as n from model_calls`.execute(stack.db);
    const requests = [...callKeys.values()].reduce((a, b) => a + b, 0);
    return [
      {
        bench: BENCH,
        figure: `${MISSIONS} missions, one 5 s tool call each, event loop held 3–12 s in every 4–15 s: completed · failed · not ended · seconds`,
        value: `${of('completed')} · ${of('failed')} · ${ids.length - of('completed') - of('failed') - of('cancelled')} · ${wallS.toFixed(0)} s`,
      },
      {
        bench: BENCH,
        figure: 'tool requests · distinct calls · requests the caller dropped',
        value: `${requests} · ${callKeys.size} · ${stack.tools.requests.filter((r) => r.aborted).length}`,
      },
      { bench: BENCH, figure: 'model requests · model calls recorded', value: `${stack.model.requests.length} · ${modelTurns.rows[0]!.n}` },
      {
        bench: BENCH,
        figure: 'activities that ended in an attempt after the first (history), by type',
        value: [...retried].map(([type, n]) => `${n} ${type}`).join(' · ') || 'none',
      },
    ];
  } finally {
    starving = false;
    await stack.stop();
  }
}

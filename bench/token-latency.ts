import { startBenchStack, startMission } from './bench-kit.ts';
import { fmtMs, log, median, percentile, type Row } from './stats.ts';

const BENCH = 'token-latency';
const MISSIONS = 20;
const CHUNK_DELAY_MS = 30;
const TEXT = 'A streamed answer of some twenty words, sent a word at a time, so that the user reads it while the model is still writing.';

/**
 * Streamed text: the moment the fake model server writes a reply's first text chunk → the moment an SSE client on
 * the same machine parses the first `text_delta`, and the whole reply's first → last delta as the client saw it.
 */
export async function run(): Promise<Row[]> {
  const { stack, key } = await startBenchStack({ name: 'writer', tools: [], maxTurns: 1 });
  try {
    stack.model.setHandler(() => ({ reply: { text: TEXT }, chunkDelayMs: CHUNK_DELAY_MS }));
    const firstMs: number[] = [];
    const spreadMs: number[] = [];
    for (let i = 0; i < MISSIONS + 1; i++) {
      const id = await startMission(stack, key, 'writer', `write ${i}`);
      const at: number[] = [];
      let text = '';
      await stack.api.readEvents(key, id, {
        onFrame: (f) => {
          if (f.event !== 'text_delta') return;
          at.push(Date.now());
          text += (JSON.parse(f.data!) as { text: string }).text;
        },
      });
      if (text !== TEXT) throw new Error(`mission ${id}: the deltas spell ${JSON.stringify(text)}`);
      const request = stack.model.requests.at(-1)!;
      if (i === 0) continue; // warm-up
      firstMs.push(at[0]! - request.firstTextAt!);
      spreadMs.push(at.at(-1)! - at[0]!);
    }
    log(BENCH, `${MISSIONS} streamed replies`);
    return [
      {
        bench: BENCH,
        figure: `model's first token → first text_delta on SSE (${MISSIONS} replies): median · p95`,
        value: `${fmtMs(median(firstMs))} · ${fmtMs(percentile(firstMs, 95))}`,
      },
      {
        bench: BENCH,
        figure: `first → last delta on SSE (the model takes ${Math.round(((TEXT.split(' ').length - 1) * CHUNK_DELAY_MS) / 10) / 100} s): median`,
        value: fmtMs(median(spreadMs)),
      },
    ];
  } finally {
    await stack.stop();
  }
}

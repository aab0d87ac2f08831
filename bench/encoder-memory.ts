import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config/config.ts';
import { createSentenceEncoder } from '../memory/sentence-encoder.ts';
import { formatTable, median, type Row } from './stats.ts';

// What the local sentence encoder costs a process that embeds, each figure from a fresh `node` process launched as
// the embedded default is (`scripts/start.sh`: no flags): its RSS before the first encode, after one encode of one
// memory-sized text (the model loaded), and after one batch of 16 texts cut at the model's 256 tokens; the batch's
// wall time; and the main thread's longest event-loop delay over that batch (the time the API and the worker of the
// process could not run). `bash scripts/run.sh node bench/encoder-memory.ts`; RUNS fresh processes, medians.
const RUNS = Number(process.env.ENCODER_MEMORY_RUNS ?? 3);
const BENCH = 'encoder-memory';

type Figures = { startMb: number; oneMb: number; batchMb: number; batchMs: number; loopMaxMs: number };

async function child(): Promise<Figures> {
  const mb = () => process.memoryUsage().rss / 2 ** 20;
  const config = loadConfig({ ...process.env, EMBEDDINGS_BASE_URL: '' });
  if (config.localEncoder !== 'sentence-encoder') throw new Error(`no sentence encoder in ${config.sentenceEncoderDir}`);
  const encoder = createSentenceEncoder({ modelDir: config.sentenceEncoderDir });
  const startMb = mb();
  await encoder.embed(['We report distances in kilometres, never in miles, in every client deliverable.']);
  const oneMb = mb();
  const texts = Array.from(
    { length: 16 },
    (_, i) => `memory ${i}: ${'the quarterly review lists every region and its totals '.repeat(40)}`,
  );
  // The longest gap between the ticks of a 1 ms timer, the batch's end included: how long the loop ran nothing else.
  const t0 = performance.now();
  let last = t0;
  let loopMaxMs = 0;
  const tick = () => {
    const now = performance.now();
    loopMaxMs = Math.max(loopMaxMs, now - last);
    last = now;
  };
  const timer = setInterval(tick, 1);
  await encoder.embed(texts);
  tick();
  clearInterval(timer);
  return { startMb, oneMb, batchMb: mb(), batchMs: performance.now() - t0, loopMaxMs };
}

function main() {
  const runs: Figures[] = [];
  for (let i = 0; i < RUNS; i++) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
    runs.push(JSON.parse(r.stdout) as Figures);
  }
  const m = (k: keyof Figures) => median(runs.map((r) => r[k]));
  const rows: Row[] = [
    {
      bench: BENCH,
      figure: `RSS of a fresh process: before the first encode · after one text · after a batch of 16 × 256 tokens (median of ${RUNS})`,
      value: `${m('startMb').toFixed(0)} · ${m('oneMb').toFixed(0)} · ${m('batchMb').toFixed(0)} MB`,
    },
    {
      bench: BENCH,
      figure: 'one batch of 16 × 256 tokens: wall time · the main thread’s longest event-loop delay meanwhile',
      value: `${m('batchMs').toFixed(0)} ms · ${m('loopMaxMs').toFixed(1)} ms`,
    },
  ];
  console.log(formatTable(rows));
}

if (process.argv[2] === '--child') console.log(JSON.stringify(await child()));
else main();

import { performance } from 'node:perf_hooks';
import { readZip } from '../skills/zip-reader.ts';
import { buildZip } from '../testkit/zip-builder.ts';

// Upload cost of the bundle reader (yauzl behind Cadenza's checks): median time to read a zipped skill folder at the
// default caps' scale, in process, nothing else running. `bash scripts/run.sh node bench/zip-reader.ts`.
const caps = { maxFiles: 200, maxFileBytes: 1024 * 1024, maxTotalBytes: 10 * 1024 * 1024, maxRatio: 100 };
const text = (i: number, kb: number) => Buffer.from(Array.from({ length: kb * 16 }, (_, j) => `line ${j} of file ${i}: notes\n`).join(''));
const shapes = [
  { name: 'small skill: SKILL.md + 5 files of 4 KiB', files: 6, kb: 4 },
  { name: 'large skill: 200 files of 40 KiB (8 MiB)', files: 200, kb: 40 },
];
const RUNS = 20;
for (const shape of shapes) {
  const zip = buildZip(Array.from({ length: shape.files }, (_, i) => ({ path: `s/f${i}.md`, data: text(i, shape.kb), deflate: true })));
  const times: number[] = [];
  for (let run = 0; run < RUNS + 2; run++) {
    const started = performance.now();
    await readZip(zip, caps);
    if (run >= 2) times.push(performance.now() - started); // two warm-up reads
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  console.log(
    `${shape.name.padEnd(44)} zip ${(zip.length / 1024).toFixed(0).padStart(5)} KiB  median ${median.toFixed(2)} ms (${RUNS} reads)`,
  );
}

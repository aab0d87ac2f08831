/** One line of the results table: which bench, which figure, its value (already formatted). */
export type Row = { bench: string; figure: string; value: string };

/** The p-th percentile (0–100) by nearest rank; NaN for no samples. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export const median = (samples: number[]): number => {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export const maxOf = (samples: number[]): number => (samples.length ? Math.max(...samples) : Number.NaN);

export const fmtMs = (ms: number): string => `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`;

/** Progress goes to stderr so the table on stdout stays clean. */
export const log = (bench: string, message: string): void => void process.stderr.write(`[${bench}] ${message}\n`);

/** The rows as an aligned two-space-separated table. */
export function formatTable(rows: Row[]): string {
  const header: Row = { bench: 'bench', figure: 'figure', value: 'value' };
  const all = [header, ...rows];
  const w1 = Math.max(...all.map((r) => r.bench.length));
  const w2 = Math.max(...all.map((r) => r.figure.length));
  const line = (r: Row) => `${r.bench.padEnd(w1)}  ${r.figure.padEnd(w2)}  ${r.value}`;
  return [line(header), '-'.repeat(w1 + w2 + 16), ...rows.map(line)].join('\n');
}

/** The rows as a markdown table, one row per figure: what bench/results.md holds. */
export function markdownTable(rows: Row[]): string {
  const cell = (t: string) => t.replace(/\|/g, '\\|');
  return [
    '| bench | figure | value |',
    '|---|---|---|',
    ...rows.map((r) => `| ${cell(r.bench)} | ${cell(r.figure)} | ${cell(r.value)} |`),
  ].join('\n');
}

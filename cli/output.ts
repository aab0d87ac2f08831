import type { Json } from './api.ts';
import { seconds } from './progress-view.ts';

/** Prints a value for scripts (`--json`) or as aligned columns for people. */
export function printRows(rows: Record<string, unknown>[], columns: string[], json: boolean, raw: unknown = rows): void {
  if (json) return void process.stdout.write(`${JSON.stringify(raw, null, 2)}\n`);
  if (rows.length === 0) return void process.stdout.write('(none)\n');
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const format = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${format(columns.map((c) => c.toUpperCase()))}\n${cells.map(format).join('\n')}\n`);
}

/** One object: JSON for scripts, `key: value` lines for people. */
export function printObject(value: Record<string, unknown>, json: boolean): void {
  if (json) return void process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  for (const [k, v] of Object.entries(value)) if (v !== undefined) process.stdout.write(`${k}: ${cell(v)}\n`);
}

const cell = (v: unknown): string =>
  v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v).replace(/\s+/g, ' ');

/** A finished mission for people: its outcome and metrics, then its answer (unless it was already streamed). */
export function printMissionResult(mission: Json, o: { alreadyShown?: string } = {}): void {
  const m = mission.result?.metrics;
  const figures = m
    ? ` in ${seconds(m.elapsedMs)} · ${m.turns} turns · ${m.toolCalls} tool calls · ${m.inputTokens} in / ${m.outputTokens} out tokens`
    : '';
  process.stdout.write(`${mission.status === 'completed' ? '✓' : '✗'} ${mission.status}${figures}\n`);
  if (mission.error) process.stdout.write(`error (${mission.error.phase}): ${mission.error.message}\n`);
  const text = mission.result?.text as string | undefined;
  if (text && text.trim() !== o.alreadyShown?.trim()) process.stdout.write(`\n${text}\n`);
}

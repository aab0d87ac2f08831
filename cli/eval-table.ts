import type { StreamEvent } from './event-stream.ts';

type Row = { caseId: string; repeat: number; candidate: string; baseline: string };

/**
 * An eval run followed from its events (`GET /eval-runs/:id/events`): on a terminal, the per-case table (each case and
 * repeat, both sides: pending, running, grading, passed, failed, not_run) redrawn in place as units move; without one,
 * a line per unit that finished (graded or not run), no redraws. `close()` leaves the screen for the final table.
 */
export function createEvalTable(out: NodeJS.WriteStream, o: { tty: boolean }) {
  const rows = new Map<string, Row>();
  let drawn = 0; // lines of the table currently on screen

  const rowOf = (d: Record<string, unknown>): Row => {
    const key = `${String(d.caseId)}/${Number(d.repeat)}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { caseId: String(d.caseId), repeat: Number(d.repeat), candidate: 'pending', baseline: 'pending' }));
    return row;
  };
  const set = (d: Record<string, unknown>, status: string) => (rowOf(d)[d.side === 'baseline' ? 'baseline' : 'candidate'] = status);

  function draw(): void {
    if (drawn > 0) out.write(`\x1b[${drawn}A\r\x1b[J`);
    const sorted = [...rows.values()].sort((a, b) => a.repeat - b.repeat || a.caseId.localeCompare(b.caseId, 'en', { numeric: true }));
    const lines = [
      ['CASE', 'REPEAT', 'CANDIDATE', 'BASELINE'],
      ...sorted.map((r) => [r.caseId, String(r.repeat), r.candidate, r.baseline]),
    ];
    const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
    for (const l of lines)
      out.write(
        `${l
          .map((v, i) => v.padEnd(widths[i]!))
          .join('  ')
          .trimEnd()}\n`,
      );
    drawn = lines.length;
  }

  return {
    event(e: StreamEvent): void {
      const d = e.data;
      const unit = `case ${String(d.caseId)} repeat ${String(d.repeat)} ${String(d.side)}`;
      switch (e.type) {
        case 'unit_started':
          set(d, 'running');
          break;
        case 'unit_finished':
          set(d, 'grading');
          break;
        case 'unit_graded':
          set(d, String(d.status));
          if (!o.tty) out.write(`${unit}: ${String(d.status)} ($${Number(d.costUsd)})\n`);
          break;
        case 'unit_not_run':
          set(d, 'not_run');
          if (!o.tty) out.write(`${unit}: not run (${String(d.reason)})\n`);
          break;
        default:
          return;
      }
      if (o.tty) draw();
    },
    /** The run ended: the live table gives way to the final one (which says why expectations failed). */
    close(): void {
      if (o.tty && drawn > 0) out.write(`\x1b[${drawn}A\r\x1b[J`);
      drawn = 0;
    },
  };
}

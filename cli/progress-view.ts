import type { StreamEvent } from './event-stream.ts';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const MARK: Record<string, string> = { completed: '✓', error: '✗', cancelled: '⊘' };

type Running = { name: string; toolUseId: string; startedAt: number };

/**
 * Renders a mission's events in a terminal: a line per turn, a spinner per running tool (redrawn in place) that
 * becomes a line with its outcome and duration, streamed text as it arrives. Without a TTY: plain lines, no redraws.
 */
export function createProgressView(out: NodeJS.WriteStream, o: { tty: boolean; missionId?: string; now?: () => number }) {
  const now = o.now ?? Date.now;
  const running = new Map<string, Running>();
  let drawn = 0; // lines of the live block currently on screen
  let midLine = false; // streamed text left the cursor inside a line
  let frame = 0;
  let turnText = '';
  let paused = false;
  const timer = o.tty ? setInterval(() => redraw(), 100) : undefined;

  const clearBlock = () => {
    if (drawn > 0) out.write(`\x1b[${drawn}A\r\x1b[J`);
    drawn = 0;
  };
  const drawBlock = () => {
    if (!o.tty || paused) return;
    frame = (frame + 1) % SPINNER.length;
    for (const r of running.values())
      out.write(`  ${SPINNER[frame]} ${r.name} \x1b[2m${r.toolUseId}\x1b[0m  ${seconds(now() - r.startedAt)}\n`);
    drawn = running.size;
  };
  function redraw() {
    if (paused || midLine) return;
    clearBlock();
    drawBlock();
  }
  /** A permanent line above the live block. */
  const line = (text: string) => {
    clearBlock();
    if (midLine) out.write('\n');
    midLine = false;
    out.write(`${text}\n`);
    drawBlock();
  };

  return {
    line,
    event(e: StreamEvent) {
      const d = e.data;
      switch (e.type) {
        case 'turn':
          turnText = '';
          line(`\x1b[1mTurn ${d.turn}\x1b[0m`);
          break;
        case 'tool_start':
          running.set(String(d.toolUseId), { name: String(d.tool), toolUseId: String(d.toolUseId), startedAt: now() });
          if (!o.tty) line(`  … ${d.tool} ${d.toolUseId} started`);
          else redraw();
          break;
        case 'tool_end': {
          running.delete(String(d.toolUseId));
          const error = d.error ? `: ${String(d.error).slice(0, 200)}` : '';
          line(`  ${MARK[String(d.status)] ?? '·'} ${d.tool} ${d.toolUseId}  ${seconds(Number(d.durationMs))} ${d.status}${error}`);
          break;
        }
        case 'text_delta':
          if (!midLine) clearBlock();
          out.write(String(d.text));
          turnText += String(d.text);
          midLine = !String(d.text).endsWith('\n');
          break;
        case 'reset':
          // The model call is being retried: what it streamed so far is void.
          if (turnText) line('\x1b[2m(retrying the model call)\x1b[0m');
          turnText = '';
          break;
        case 'budget_reached':
          line(`  ⏸ budget reached (${Number((d.spent as { tokens: number }).tokens)} tokens spent): paused until it is raised`);
          break;
        case 'context_compacted':
          line(`  ⋯ context compacted: ${d.messages} earlier messages folded into a summary`);
          break;
        case 'client_tool_call':
          // A tool the caller runs: the mission waits (its spinner goes on) until the result is sent or the deadline.
          line(`  ⌨ ${d.tool} ${d.toolUseId} waits for your result until ${String(d.deadline)}: ${JSON.stringify(d.input).slice(0, 200)}`);
          line(
            `    cadenza tools result ${o.missionId ?? '<mission>'} ${d.toolUseId} [--file output.json | < output.json] (or --error <message>)`,
          );
          break;
        case 'delegate':
          line(`  ⤷ ${d.toolUseId} sub-mission ${d.childId} (${d.skill}) ${d.status}`);
          break;
        case 'output_rejected':
          line(`  ✗ the answer misses the output schema${d.retried ? ' (asked again)' : ''}: ${String(d.errors).slice(0, 300)}`);
          break;
        case 'model_fallback':
          line(`  ⇢ model ${d.from} unavailable (${d.reason}): turn ${d.turn} goes to ${d.to}`);
          break;
        case 'provider_wait':
          line(`  ⧗ turn ${d.turn} waits its turn at ${d.target}'s limits (about ${Math.ceil(Number(d.waitMs) / 1000)} s)`);
          break;
        case 'message':
          line(`  ✉ ${d.mode === 'interrupt' ? 'interrupt' : 'message'} delivered: ${String(d.text).slice(0, 200)}`);
          break;
        case 'tool_attempt':
          // The script factory's attempts (durable); MCP's live `tool_progress` is not shown.
          line(`  ↻ ${d.toolUseId} attempt ${d.progress}/${d.total}: ${String(d.message).slice(0, 200)}`);
          break;
        case 'error':
          line(`  ✗ ${d.phase ? `${d.phase}: ` : ''}${d.message}`);
          break;
      }
    },
    /** Text streamed in the current turn (the final answer, when the model streams). */
    streamedText: () => turnText,
    pause() {
      paused = true;
      clearBlock();
      if (midLine) out.write('\n');
      midLine = false;
    },
    resume() {
      paused = false;
      drawBlock();
    },
    stop() {
      if (timer) clearInterval(timer);
      clearBlock();
      if (midLine) out.write('\n');
      midLine = false;
    },
  };
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

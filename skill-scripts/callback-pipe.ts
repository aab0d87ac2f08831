import type { Duplex } from 'node:stream';

/** Longest request line a script may write on its callback pipe; a longer one closes the pipe. */
export const MAX_CALL_LINE_BYTES = 64 * 1024;

/** One call a script asked for: a tool's bare name and its input. */
export type ScriptCall = { seq: number; tool: string; input: Record<string, unknown> };
/** The answer written back, one JSON line. */
export type ScriptCallReply = { ok: true; result: unknown } | { ok: false; error: string };
/** Decides and runs one call (allowlist, recording); its answer goes back to the script. */
export type ScriptCallHandler = (call: ScriptCall) => Promise<ScriptCallReply>;

/**
 * Serves the line protocol on a script's inherited pipe: each request is one line of JSON `{"tool", "input"}`,
 * each answer one line of JSON `{"ok": true, "result"} | {"ok": false, "error"}`, in order, one call at a time.
 * At most `maxCalls` calls reach the handler; a malformed line gets an error answer; an over-long line closes the pipe.
 */
export function serveCallbacks(pipe: Duplex, handler: ScriptCallHandler, maxCalls: number): { settled: () => Promise<void> } {
  let buffered = Buffer.alloc(0);
  let lines = 0;
  let seq = 0;
  let closed = false;
  let queue = Promise.resolve();
  const reply = (answer: ScriptCallReply) => {
    if (!pipe.destroyed && !pipe.writableEnded) pipe.write(`${JSON.stringify(answer)}\n`);
  };
  // Once closed, whatever the script still writes is read and dropped: nothing it sends can grow without bound.
  const close = (why: string) => {
    reply({ ok: false, error: `${why}; the pipe is closed` });
    pipe.end();
    closed = true;
    buffered = Buffer.alloc(0);
  };
  const handle = async (line: string) => {
    const request = parse(line);
    if (typeof request === 'string') return reply({ ok: false, error: request });
    seq += 1;
    if (seq > maxCalls) return reply({ ok: false, error: `at most ${maxCalls} tool calls per script run` });
    try {
      reply(await handler({ seq, ...request }));
    } catch (err) {
      reply({ ok: false, error: err instanceof Error ? err.message : String(err) });
    }
  };
  pipe.on('data', (chunk: Buffer) => {
    if (closed) return;
    buffered = Buffer.concat([buffered, chunk]);
    for (let nl = buffered.indexOf(10); nl !== -1 && !closed; nl = buffered.indexOf(10)) {
      const line = buffered.subarray(0, nl).toString('utf8');
      buffered = buffered.subarray(nl + 1);
      if (line.trim() === '') continue;
      lines += 1;
      // Refused requests are answered too, but a script that floods the pipe loses it.
      if (lines > 2 * maxCalls + 10) {
        closed = true;
        queue = queue.then(() => close(`more than ${2 * maxCalls + 10} requests`));
      } else queue = queue.then(() => handle(line));
    }
    if (!closed && buffered.length > MAX_CALL_LINE_BYTES) close(`a request line is limited to ${MAX_CALL_LINE_BYTES} bytes`);
  });
  pipe.on('error', () => {}); // the script may exit mid-answer
  return { settled: () => queue };
}

function parse(line: string): { tool: string; input: Record<string, unknown> } | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'a request is one line of JSON {"tool": "<name>", "input": {...}}';
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'a request must be a JSON object';
  const { tool, input = {} } = value as { tool?: unknown; input?: unknown };
  if (typeof tool !== 'string' || tool === '') return 'a request names its "tool"';
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return '"input" must be a JSON object';
  return { tool, input: input as Record<string, unknown> };
}

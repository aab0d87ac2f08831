import { pino } from 'pino';
import { redact } from './redact.ts';

/** A structured logger (pino): one JSON object per line on stderr, or human-readable lines on a terminal. */
export interface Logger {
  debug(msg: string, fields?: object): void;
  info(msg: string, fields?: object): void;
  warn(msg: string, fields?: object): void;
  error(msg: string, fields?: object): void;
  child(fields: object): Logger;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
/** `json` always, `pretty` always, or `auto`: pretty when stderr is a terminal, JSON otherwise. */
export type LogFormat = 'auto' | 'json' | 'pretty';

export function createLogger(
  opts: { level?: LogLevel; format?: LogFormat; bindings?: object; write?: (line: string) => void } = {},
): Logger {
  const pretty = opts.format === 'pretty' || (opts.format !== 'json' && !opts.write && process.stderr.isTTY === true);
  const write = opts.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const root = pino(
    {
      level: opts.level ?? 'info',
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // Errors are already plain objects (redact keeps stack and cause); pino's own err serializer would re-type them.
      serializers: { err: (v: unknown) => v },
    },
    // Synchronous writes: the last lines before process.exit (shutdown) are never lost in a buffer.
    { write: (line: string) => write(pretty ? humanLine(line) : line.trimEnd()) },
  );
  return wrap(opts.bindings ? root.child(redact(opts.bindings) as object) : root);
}

function wrap(p: pino.Logger): Logger {
  // Fields are redacted (secrets by name, credentials inside strings) and errors keep stack and cause.
  const at = (level: LogLevel) => (msg: string, fields?: object) => {
    if (p.isLevelEnabled(level)) p[level](fields ? (redact(fields) as object) : {}, redact(msg) as string);
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (fields) => wrap(p.child(redact(fields) as object)),
  };
}

const LEVEL_WIDTH = 5;

/** `12:00:01.234 INFO  msg  key=value …`, with an error's stack on the following lines. */
function humanLine(json: string): string {
  const { time, level, msg, pid: _pid, ...fields } = JSON.parse(json) as Record<string, unknown>;
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const stacks: string[] = [];
  const pairs = Object.entries(fields).map(([k, v]) => {
    const err = v as { stack?: unknown; type?: unknown; message?: unknown; cause?: { type?: unknown; message?: unknown } } | null;
    if (err && typeof err === 'object' && typeof err.stack === 'string') {
      stacks.push(err.stack);
      const cause = err.cause?.message !== undefined ? ` (cause: ${String(err.cause.type)}: ${String(err.cause.message)})` : '';
      return `${k}=${String(err.type)}: ${String(err.message)}${cause}`;
    }
    return `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`;
  });
  const head = `${clock} ${String(level).toUpperCase().padEnd(LEVEL_WIDTH)} ${String(msg)}${pairs.length ? `  ${pairs.join(' ')}` : ''}`;
  return [head, ...stacks.map((s) => s.replace(/^/gm, '    '))].join('\n');
}

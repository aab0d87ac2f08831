/** A structured logger: one JSON object per line on stderr, with bound fields. */
export interface Logger {
  debug(msg: string, fields?: object): void;
  info(msg: string, fields?: object): void;
  warn(msg: string, fields?: object): void;
  error(msg: string, fields?: object): void;
  child(fields: object): Logger;
}

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
export type LogLevel = keyof typeof LEVELS;

export function createLogger(opts: { level?: LogLevel; bindings?: object; write?: (line: string) => void } = {}): Logger {
  const min = LEVELS[opts.level ?? 'info'];
  const write = opts.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const bindings = opts.bindings ?? {};
  const log = (level: LogLevel) => (msg: string, fields?: object) => {
    if (LEVELS[level] < min) return;
    write(JSON.stringify({ t: new Date().toISOString(), level, msg, ...bindings, ...serialise(fields) }));
  };
  return {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: (more) => createLogger({ ...opts, bindings: { ...bindings, ...more } }),
  };
}

function serialise(fields: object | undefined): object {
  if (!fields) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v instanceof Error ? { name: v.name, message: v.message } : v;
  }
  return out;
}

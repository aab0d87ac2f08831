import { createWriteStream, type WriteStream } from 'node:fs';

/**
 * The run's process log: every line of every process, prefixed with the process's name, so a failure found after the
 * run (a mission's model call timed out three times) can be read against what the processes said at the time
 * (`startService`'s `onLine`, testkit/chaos/service-process.ts).
 */
export function createProcessLog(path: string) {
  const out: WriteStream = createWriteStream(path, { flags: 'a' });
  return {
    path,
    write: (name: string, line: string) => void out.write(`${name} ${line}\n`),
    close: () => new Promise<void>((ok) => out.end(ok)),
  };
}
export type ProcessLog = ReturnType<typeof createProcessLog>;

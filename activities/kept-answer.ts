import { gunzipSync, gzipSync } from 'node:zlib';
import type { Logger } from '../lib/logger.ts';
import { advanceCheckpoint, readCheckpoint, type KeptAnswer } from './checkpoint.ts';

// Heartbeat details are one payload (Temporal warns past 512 KiB and refuses 2 MiB): an answer is kept up to 256 KiB.
// Up to 32 KiB it stays readable in the Web UI's pending-activity panel.
export const KEEP_BOUND_BYTES = 256 * 1024;
const PLAIN_BOUND_BYTES = 32 * 1024;

/**
 * The provider's or the tool's answer for this activity, asked for once: it is kept in the checkpoint (heartbeat
 * details) before the caller stores it, so a run again after the store failed (an outage waited out in the same
 * attempt, or the next attempt) retries the store with the kept answer instead of paying for the call again. An
 * answer past the bound is not kept: a failed store then asks again (at least once, as after a worker's death).
 */
export async function answerOnce<T>(ask: () => Promise<T>, logger: Logger): Promise<T> {
  const kept = readCheckpoint().answer;
  if (kept) return unpack(kept) as T;
  const answer = await ask();
  const packed = pack(answer);
  if (packed) advanceCheckpoint({ answer: packed });
  else logger.warn('answer too large to keep in heartbeat details: a failed store will ask for it again', { boundBytes: KEEP_BOUND_BYTES });
  return answer;
}

/** The answer as heartbeat details carry it, or undefined past the bound. */
export function pack(answer: unknown): KeptAnswer | undefined {
  const json = JSON.stringify(answer) ?? 'null';
  if (Buffer.byteLength(json) <= PLAIN_BOUND_BYTES) return { value: JSON.parse(json) as unknown };
  const gzip = gzipSync(json).toString('base64');
  return gzip.length <= KEEP_BOUND_BYTES ? { gzip } : undefined;
}

export function unpack(kept: KeptAnswer): unknown {
  return 'gzip' in kept ? (JSON.parse(gunzipSync(Buffer.from(kept.gzip, 'base64')).toString('utf8')) as unknown) : kept.value;
}

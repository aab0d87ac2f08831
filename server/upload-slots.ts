import type { RequestHandler } from 'express';
import { UnavailableError } from '../contracts/errors.ts';

/**
 * Bounds how many large uploads (skill zips, up to the bundle caps) are read and processed at once: each costs
 * several copies of its size while it is unpacked, re-zipped and stored, so under a flood the process's memory
 * would grow with the number in flight. Past `slots`, a request waits (its body stays in the socket, unread) in a
 * queue of at most `queue`; past that it is a 503 with Retry-After. A slot is freed when the response closes.
 */
export function uploadSlots(slots: number, queue: number): RequestHandler {
  let busy = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else busy--;
  };
  return (_req, res, next) => {
    const start = () => {
      res.once('close', release);
      next();
    };
    if (busy < slots) {
      busy++;
      return start();
    }
    if (waiting.length >= queue) {
      throw new UnavailableError(`too many uploads in progress (${slots} at once, ${queue} waiting); retry shortly`);
    }
    waiting.push(start);
    // A client that gives up while waiting leaves the queue.
    res.once('close', () => {
      const at = waiting.indexOf(start);
      if (at >= 0) waiting.splice(at, 1);
    });
  };
}

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../lib/logger.ts';
import { watchLoopStalls } from '../../worker/loop-stalls.ts';

describe('the worker’s event-loop stall log', () => {
  const held = (ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until); // the loop held, as a long synchronous step holds a worker's
  };
  const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

  it('logs a loop held longer than the bound, with how long, and nothing for one held shorter', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ level: 'info', format: 'json', write: (line) => lines.push(JSON.parse(line)) });
    const stop = watchLoopStalls(logger, { sampleMs: 50, logOverMs: 1_000 });
    try {
      held(100);
      await sleep(120);
      assert.equal(lines.length, 0, 'a 100 ms hold is under the bound');
      held(1_600);
      await sleep(120);
      assert.equal(lines.length, 1);
      assert.equal(lines[0]!.msg, 'event loop stalled');
      const stalledMs = lines[0]!.stalledMs as number;
      assert.ok(stalledMs >= 1_500, `stalled ${stalledMs} ms`);
    } finally {
      stop();
    }
  });
});

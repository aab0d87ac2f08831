import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { MockActivityEnvironment } from '@temporalio/testing';
import { CHECKPOINT_BEAT_DELAY_MS } from '../../activities/checkpoint.ts';
import { outlastDatabaseOutages } from '../../activities/database-outage.ts';
import { answerOnce } from '../../activities/kept-answer.ts';
import { createLogger } from '../../lib/logger.ts';

const logger = createLogger({ level: 'error' });

/** An activity as the worker runs it: the answer kept, then stored after `storeMs`; what reached the server's heartbeats. */
async function run(storeMs: number): Promise<unknown[]> {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 30_000 });
  const beats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => beats.push(details));
  const { call } = outlastDatabaseOutages(
    {
      call: async () => {
        const reply = await answerOnce(async () => ({ text: 'the provider answered' }), logger);
        await sleep(storeMs); // the store
        return reply;
      },
    },
    { maxWaitSeconds: 1, logger },
  );
  await env.run(call);
  await sleep(CHECKPOINT_BEAT_DELAY_MS + 200); // a beat still waiting would have come by now
  return beats;
}

test('a kept answer whose store ends at once costs no heartbeat', async () => {
  assert.deepEqual(await run(5), []);
});

test('a kept answer whose store is slow reaches the server in a heartbeat, for the next attempt if the worker dies', async () => {
  const beats = await run(CHECKPOINT_BEAT_DELAY_MS + 300);
  assert.deepEqual(beats, [{ answer: { value: { text: 'the provider answered' } } }]);
});

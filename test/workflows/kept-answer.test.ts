import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { beat } from '../../activities/checkpoint.ts';
import { answerOnce } from '../../activities/kept-answer.ts';
import { createLogger } from '../../lib/logger.ts';
import { answer, startWorkflowHarness } from './workflow-harness.ts';

describe('an answer kept in the heartbeat details reaches the next attempt', () => {
  let harness: Awaited<ReturnType<typeof startWorkflowHarness>>;
  before(async () => {
    harness = await startWorkflowHarness();
  });
  after(() => harness.teardown());

  it('even when the attempt fails while the heartbeat carrying it is still throttled: the failure report carries it', async () => {
    let asks = 0;
    const attempts: number[] = [];
    await harness.run(
      {
        // The model activity's heartbeat timeout is 10 s: with this ceiling a heartbeat waits up to 8 s behind the last one.
        heartbeatThrottle: '60s',
        model: async () => {
          const ctx = Context.current();
          attempts.push(ctx.info.attempt);
          beat(ctx); // the attempt's first heartbeat goes out at once; the one keeping the answer is held by the throttle
          const reply = await answerOnce(async () => (asks++, answer('kept')), createLogger({ level: 'error' }));
          if (ctx.info.attempt === 1) throw ApplicationFailure.retryable('the store failed', 'StoreFailed');
          return reply;
        },
      },
      async (m) => {
        const result = await m.handle.result();
        assert.equal(result.text, 'kept');
        assert.deepEqual(attempts, [1, 2]);
        assert.equal(asks, 1, 'the second attempt took the kept answer instead of asking again');
      },
    );
  });
});
